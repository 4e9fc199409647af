//go:build unix

package cpu

import "golang.org/x/sys/unix"

// allocTiles returns n zeroed bytes for a tiled copy, mapped outside the Go heap: the
// copies are most of a model's resident memory, and on the heap they would raise the
// garbage collector's goal by their size, letting that much garbage (the scratch of
// finished requests) stay resident before a collection. The mapping asks for huge
// pages (where the system gives them on request) since the tiles are streamed whole
// every step. It falls back to the heap when the mapping fails.
func allocTiles(n int) []byte {
	if n == 0 {
		return nil
	}
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return make([]byte, n)
	}
	adviseHugePages(b)
	return b[:n:n]
}

// freeTiles releases a copy made by allocTiles; b must not be used afterwards.
func freeTiles(b []byte) {
	if len(b) > 0 {
		// A heap fallback is not a mapping: Munmap then fails with EINVAL and the
		// garbage collector frees it.
		_ = unix.Munmap(b)
	}
}
