package gguf

import "golang.org/x/sys/unix"

// noHugePages keeps the range b from being mapped in huge pages (advice only: EINVAL
// where THP is absent).
func noHugePages(b []byte) { _ = unix.Madvise(b, unix.MADV_NOHUGEPAGE) }
