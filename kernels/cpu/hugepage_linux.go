package cpu

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// adviseHugePages asks for transparent huge pages under b (advice only: EINVAL where
// THP is absent).
func adviseHugePages(b []byte) { _ = unix.Madvise(b, unix.MADV_HUGEPAGE) }

// keepApart marks the mapping under b MADV_DONTFORK (a child process has no use for a
// bandwidth probe's buffer), which also keeps the kernel from merging it with a
// neighbouring mapping without the mark, such as the weights' arenas.
func keepApart(b []byte) {
	if len(b) > 0 {
		_ = unix.Madvise(b, unix.MADV_DONTFORK)
	}
}

// HugePageBytes returns how many bytes of the mappings that hold b the system keeps
// in transparent huge pages (AnonHugePages in /proc/self/smaps) and how large those
// mappings are, and false where that cannot be read. The kernel counts per mapping,
// not per byte, and may merge neighbouring mappings: the count is the mappings', of
// which b may be a part (a bandwidth probe's buffer, alone in the process, is one).
func HugePageBytes(b []byte) (huge, mapped int64, ok bool) {
	if len(b) == 0 {
		return 0, 0, true
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0, 0, false
	}
	defer f.Close()
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	huge, mapped, err = hugeBytesIn(f, lo, lo+uintptr(len(b)))
	return huge, mapped, err == nil
}

// hugeBytesIn sums the AnonHugePages and the sizes of the mappings in smaps (the
// format of /proc/PID/smaps) that overlap [lo, hi).
func hugeBytesIn(smaps io.Reader, lo, hi uintptr) (huge, mapped int64, err error) {
	sc := bufio.NewScanner(smaps)
	in := false
	for sc.Scan() {
		line := sc.Bytes()
		if start, end, ok := mappingRange(line); ok {
			if in = start < hi && end > lo; in {
				mapped += int64(end - start)
			}
			continue
		}
		if in && bytes.HasPrefix(line, []byte("AnonHugePages:")) {
			f := strings.Fields(string(line[len("AnonHugePages:"):]))
			if len(f) != 2 || f[1] != "kB" {
				continue
			}
			if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil {
				huge += kb << 10
			}
		}
	}
	return huge, mapped, sc.Err()
}

// mappingRange parses the address range that starts a mapping's header line in smaps
// ("7f12…000-7f12…000 rw-p …").
func mappingRange(line []byte) (start, end uintptr, ok bool) {
	sp := bytes.IndexByte(line, ' ')
	if sp < 0 {
		return 0, 0, false
	}
	a, b, found := bytes.Cut(line[:sp], []byte("-"))
	if !found {
		return 0, 0, false
	}
	s, err1 := strconv.ParseUint(string(a), 16, 64)
	e, err2 := strconv.ParseUint(string(b), 16, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return uintptr(s), uintptr(e), true
}

// HugePageMode returns the system's transparent huge page setting for anonymous
// memory ("always", "madvise" or "never": the weights and the bandwidth probe's buffer
// ask for huge pages, which "never" refuses), "" where it cannot be read.
func HugePageMode() string {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil {
		return ""
	}
	return selectedMode(string(b))
}

// selectedMode returns the bracketed word of a sysfs choice list ("always [madvise]
// never" → "madvise"), "" if none is.
func selectedMode(s string) string {
	for _, w := range strings.Fields(s) {
		if len(w) > 2 && w[0] == '[' && w[len(w)-1] == ']' {
			return w[1 : len(w)-1]
		}
	}
	return ""
}
