package engine

import (
	"encoding/binary"
	"hash/fnv"
	"slices"
)

// blockPool manages the KV cache's blocks (as vLLM's block manager): allocation,
// reference counts, and the prefix cache — full blocks keyed by a hash of every token
// up to their end, shared between sequences, and kept after their last user lets go
// until the space is needed, least recently freed first.
//
// Free blocks sit on one list: blocks holding no cached prefix at the front (used
// first), cached ones behind in the order they were freed (evicted from the front of
// that part, so the least recently used goes first). Only the scheduler goroutine
// touches a pool.
type blockPool struct {
	size   int     // positions per block
	ref    []int32 // sequences holding each block
	cached []bool  // the block is in byHash
	key    []uint64
	parent []uint64 // the key of the block before it in its sequence (0 for the first)
	toks   []int32  // the tokens of each cached block, size per block, to rule out collisions
	byHash map[uint64]int32
	// prev and next link the free list; index len(ref) is its sentinel.
	prev, next []int32
	nFree      int
	prefix     bool // prefix caching on
	nCached    int  // free blocks on the list that hold a cached prefix
}

func newBlockPool(blocks, size int, prefix bool) *blockPool {
	p := &blockPool{size: size, ref: make([]int32, blocks), cached: make([]bool, blocks),
		key: make([]uint64, blocks), parent: make([]uint64, blocks),
		prev: make([]int32, blocks+1), next: make([]int32, blocks+1), prefix: prefix}
	if prefix {
		p.toks = make([]int32, blocks*size)
		p.byHash = make(map[uint64]int32)
	}
	s := int32(blocks)
	p.prev[s], p.next[s] = s, s
	for b := range int32(blocks) {
		p.pushBack(b)
	}
	return p
}

// total returns the blocks in the pool; used returns those held by sequences.
func (p *blockPool) total() int { return len(p.ref) }
func (p *blockPool) used() int  { return len(p.ref) - p.nFree }

func (p *blockPool) unlink(b int32) {
	p.next[p.prev[b]], p.prev[p.next[b]] = p.next[b], p.prev[b]
	p.nFree--
}

func (p *blockPool) insertAfter(at, b int32) {
	p.prev[b], p.next[b] = at, p.next[at]
	p.prev[p.next[at]] = b
	p.next[at] = b
	p.nFree++
}

func (p *blockPool) pushBack(b int32)  { p.insertAfter(p.prev[len(p.ref)], b) }
func (p *blockPool) pushFront(b int32) { p.insertAfter(int32(len(p.ref)), b) }

// alloc takes n free blocks (the caller has checked nFree ≥ n), evicting the cached
// prefixes they held, and appends them to table.
func (p *blockPool) alloc(table []int32, n int) []int32 {
	for range n {
		b := p.next[len(p.ref)]
		p.unlink(b)
		if p.cached[b] {
			p.nCached--
			p.cached[b] = false
			delete(p.byHash, p.key[b])
		}
		p.ref[b] = 1
		table = append(table, b)
	}
	return table
}

// take adds a user to a cached block found by lookup.
func (p *blockPool) take(b int32) {
	if p.ref[b] == 0 {
		p.unlink(b)
		p.nCached--
	}
	p.ref[b]++
}

// free lets go of a sequence's blocks, last first, so that when they are cached the
// end of a sequence is evicted before its beginning. Entries below 0 (blocks a rolling
// window gave back already) are skipped.
func (p *blockPool) free(table []int32) {
	for _, b := range slices.Backward(table) {
		if b < 0 {
			continue
		}
		if p.ref[b]--; p.ref[b] > 0 {
			continue
		}
		if p.cached[b] {
			p.pushBack(b)
			p.nCached++
		} else {
			p.pushFront(b)
		}
	}
}

// chainKey returns the prefix-cache key of a block: a hash of the previous block's
// key and the block's tokens.
func chainKey(parent uint64, toks []int32) uint64 {
	h := fnv.New64a()
	var buf [8]byte
	binary.LittleEndian.PutUint64(buf[:], parent)
	h.Write(buf[:])
	for _, t := range toks {
		binary.LittleEndian.PutUint32(buf[:4], uint32(t))
		h.Write(buf[:4])
	}
	return h.Sum64()
}

// lookup returns the cached block that holds toks after the block keyed parent.
func (p *blockPool) lookup(key, parent uint64, toks []int32) (int32, bool) {
	b, ok := p.byHash[key]
	if !ok || p.parent[b] != parent || !slices.Equal(p.toks[int(b)*p.size:(int(b)+1)*p.size], toks) {
		return 0, false
	}
	return b, true
}

// register enters a full block into the prefix cache, unless prefix caching is off
// or another block already holds the same prefix (the block then stays private).
func (p *blockPool) register(b int32, key, parent uint64, toks []int32) {
	if !p.prefix || p.cached[b] {
		return
	}
	if _, dup := p.byHash[key]; dup {
		return
	}
	p.byHash[key] = b
	p.cached[b], p.key[b], p.parent[b] = true, key, parent
	copy(p.toks[int(b)*p.size:], toks)
}

// dropCached forgets every cached prefix held by a free block: the blocks stay free
// (moved to the front of the list, used first) and lookups no longer find them.
// Blocks that sequences hold keep their entries.
func (p *blockPool) dropCached() {
	if !p.prefix {
		return
	}
	for b := range int32(len(p.ref)) {
		if p.ref[b] != 0 || !p.cached[b] {
			continue
		}
		p.unlink(b)
		p.nCached--
		p.cached[b] = false
		delete(p.byHash, p.key[b])
		p.pushFront(b)
	}
}
