//go:build unix

package gguf

import (
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mapFile maps size bytes of f read-only.
func mapFile(f *os.File, size int) ([]byte, error) {
	return syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
}

// unmapFile releases a mapping made by mapFile.
func unmapFile(b []byte) error { return syscall.Munmap(b) }

// releasePages drops the whole pages inside b, a part of a mapping made by mapFile,
// from the process's resident memory (madvise MADV_DONTNEED): the mapping is shared
// and read-only, so they come back from the file if touched again. The range is first
// marked MADV_NOHUGEPAGE: where the page cache holds the file in 2 MiB folios, a read
// next to the range (an embedding row) would otherwise map a whole folio back in.
func releasePages(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	ps := uintptr(os.Getpagesize())
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := (p + ps - 1) &^ (ps - 1)
	hi := (p + uintptr(len(b))) &^ (ps - 1)
	if hi <= lo {
		return nil
	}
	r := b[lo-p : hi-p]
	noHugePages(r)
	return unix.Madvise(r, unix.MADV_DONTNEED)
}
