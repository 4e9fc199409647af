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
