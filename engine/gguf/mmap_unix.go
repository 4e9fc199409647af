//go:build unix

package gguf

import (
	"os"
	"syscall"
)

// mapFile maps size bytes of f read-only.
func mapFile(f *os.File, size int) ([]byte, error) {
	return syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
}

// unmapFile releases a mapping made by mapFile.
func unmapFile(b []byte) error { return syscall.Munmap(b) }
