//go:build !unix

package gguf

import (
	"io"
	"os"
)

// mapFile reads the file into memory where memory maps are not available.
func mapFile(f *os.File, size int) ([]byte, error) {
	b := make([]byte, size)
	_, err := io.ReadFull(f, b)
	return b, err
}

// unmapFile releases a buffer made by mapFile.
func unmapFile([]byte) error { return nil }

// releasePages does nothing where the file was read into memory.
func releasePages([]byte) error { return nil }
