package engine

import (
	"slices"
	"testing"
)

// TestBlockPoolLRU checks the block pool's books: reference counts, blocks without a
// cached prefix reused before cached ones, cached ones evicted least recently freed
// first (a sequence's end before its beginning), and lookups that check the tokens.
func TestBlockPoolLRU(t *testing.T) {
	p := newBlockPool(6, 2, true)
	toks := []int32{1, 2, 3, 4, 5, 6}
	a := p.alloc(nil, 3) // a sequence of three full blocks
	var keys []uint64
	var parent uint64
	for i, b := range a {
		k := chainKey(parent, toks[2*i:2*i+2])
		p.register(b, k, parent, toks[2*i:2*i+2])
		keys, parent = append(keys, k), k
	}
	other := p.alloc(nil, 2) // an uncached sequence
	if p.nFree != 1 || p.used() != 5 {
		t.Fatalf("free %d, used %d", p.nFree, p.used())
	}
	// A second user of the first two blocks.
	b0, ok := p.lookup(keys[0], 0, toks[0:2])
	if !ok || b0 != a[0] {
		t.Fatalf("lookup of block 0: %d, %v", b0, ok)
	}
	if _, ok := p.lookup(keys[1], keys[0], []int32{3, 9}); ok {
		t.Error("a lookup with other tokens under the same key hit")
	}
	p.take(a[0])
	p.take(a[1])
	p.free(a)     // a[2] goes to the cached part; a[0], a[1] are still held
	p.free(other) // uncached: reused first
	if p.nFree != 4 || p.nCached != 1 {
		t.Fatalf("free %d, cached %d", p.nFree, p.nCached)
	}
	p.free(a[:2]) // now a[1] then a[0] join the cached part, after a[2]
	// Order of reuse: the never-used block and the uncached ones (front), then the
	// cached ones least recently freed first: a[2], a[1], a[0].
	got := p.alloc(nil, 6)
	want := []int32{other[0], other[1], 5, a[2], a[1], a[0]}
	if !slices.Equal(got, want) {
		t.Errorf("allocation order %v, want %v", got, want)
	}
	if len(p.byHash) != 0 || p.nCached != 0 {
		t.Errorf("after evicting all, %d keys and %d cached blocks remain", len(p.byHash), p.nCached)
	}
	if _, ok := p.lookup(keys[0], 0, toks[0:2]); ok {
		t.Error("an evicted block was found")
	}
}

// TestBlockPoolNoPrefix checks that with the prefix cache off nothing is registered.
func TestBlockPoolNoPrefix(t *testing.T) {
	p := newBlockPool(2, 4, false)
	b := p.alloc(nil, 1)
	p.register(b[0], 7, 0, []int32{1, 2, 3, 4})
	p.free(b)
	if p.nCached != 0 || p.cached[b[0]] {
		t.Error("a block was cached with the prefix cache off")
	}
}

// FuzzBlockPool drives the pool with random allocations, frees, registrations and
// cache hits, and compares it after every operation with a plain model: reference
// counts, the free list's order (uncached blocks in front, cached ones behind in the
// order they were freed) and the prefix cache's contents.
func FuzzBlockPool(f *testing.F) {
	f.Add([]byte{0, 3, 2, 1, 5, 0, 9, 3, 1, 1, 2, 7, 0, 2})
	f.Add([]byte{0, 8, 2, 0, 2, 1, 2, 2, 1, 0, 3, 0, 3, 1, 0, 4})
	f.Fuzz(func(t *testing.T, ops []byte) {
		const n = 8
		p := newBlockPool(n, 1, true)
		ref := make([]int32, n)
		order := make([]int32, n) // the model's free list, front first
		for i := range order {
			order[i] = int32(i)
		}
		cached := map[uint64]int32{} // key -> block
		keyOf := map[int32]uint64{}
		var seqs [][]int32
		remove := func(b int32) {
			i := slices.Index(order, b)
			order = slices.Delete(order, i, i+1)
		}
		for k := 0; k+1 < len(ops); k += 2 {
			op, arg := ops[k]%4, int(ops[k+1])
			switch op {
			case 0: // a new sequence of 1 + arg%3 blocks, if they are free
				m := 1 + arg%3
				if m > p.nFree {
					continue
				}
				got := p.alloc(nil, m)
				want := slices.Clone(order[:m])
				order = order[m:]
				for _, b := range want {
					ref[b] = 1
					if key, ok := keyOf[b]; ok {
						delete(cached, key)
						delete(keyOf, b)
					}
				}
				if !slices.Equal(got, want) {
					t.Fatalf("alloc %d: %v, want %v", m, got, want)
				}
				seqs = append(seqs, got)
			case 1: // a sequence ends
				if len(seqs) == 0 {
					continue
				}
				i := arg % len(seqs)
				p.free(seqs[i])
				for _, b := range slices.Backward(seqs[i]) {
					if ref[b]--; ref[b] == 0 {
						if _, ok := keyOf[b]; ok {
							order = append(order, b)
						} else {
							order = append([]int32{b}, order...)
						}
					}
				}
				seqs = slices.Delete(seqs, i, i+1)
			case 2: // a sequence's block is entered into the cache under key arg%5
				if len(seqs) == 0 {
					continue
				}
				s := seqs[arg%len(seqs)]
				b := s[arg%len(s)]
				key := uint64(arg % 5)
				p.register(b, key, 0, []int32{int32(key)})
				_, dup := cached[key]
				if _, has := keyOf[b]; !dup && !has {
					cached[key], keyOf[b] = b, key
				}
			case 3: // a new sequence finds key arg%5 in the cache
				key := uint64(arg % 5)
				b, ok := p.lookup(key, 0, []int32{int32(key)})
				wb, wok := cached[key]
				if ok != wok || (ok && b != wb) {
					t.Fatalf("lookup %d: %d %v, want %d %v", key, b, ok, wb, wok)
				}
				if !ok {
					continue
				}
				p.take(b)
				if ref[b] == 0 {
					remove(b)
				}
				ref[b]++
				seqs = append(seqs, []int32{b})
			}
			// Compare the books.
			if !slices.Equal(p.ref, ref) {
				t.Fatalf("after op %d: refs %v, want %v", op, p.ref, ref)
			}
			var list []int32
			for b := p.next[n]; b != n && len(list) <= n; b = p.next[b] {
				list = append(list, b)
			}
			if !slices.Equal(list, order) || p.nFree != len(order) {
				t.Fatalf("after op %d: free list %v (%d), want %v", op, list, p.nFree, order)
			}
			nc := 0
			for _, b := range order {
				if _, ok := keyOf[b]; ok {
					nc++
				}
			}
			if p.nCached != nc || len(p.byHash) != len(cached) {
				t.Fatalf("after op %d: %d cached free, %d keys; want %d, %d", op, p.nCached, len(p.byHash), nc, len(cached))
			}
		}
	})
}
