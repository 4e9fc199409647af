//go:build !linux

package gguf

// noHugePages does nothing where there is no transparent huge page advice.
func noHugePages([]byte) {}
