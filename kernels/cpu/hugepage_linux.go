package cpu

import "golang.org/x/sys/unix"

// adviseHugePages asks for transparent huge pages under b (advice only: EINVAL where
// THP is absent).
func adviseHugePages(b []byte) { _ = unix.Madvise(b, unix.MADV_HUGEPAGE) }
