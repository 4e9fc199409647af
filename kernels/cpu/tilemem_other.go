//go:build !unix

package cpu

// allocTiles returns n zeroed bytes for a tiled copy.
func allocTiles(n int) []byte { return make([]byte, n) }

// freeTiles leaves a copy made by allocTiles to the garbage collector.
func freeTiles([]byte) {}

// allocStreamed returns n zeroed bytes for AllocStreamed.
func allocStreamed(n int) []byte { return make([]byte, n) }
