package cpu

import (
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestHugeBytesIn sums AnonHugePages over the smaps mappings that overlap a range, and
// only those.
func TestHugeBytesIn(t *testing.T) {
	const smaps = `7f0000000000-7f0000400000 rw-p 00000000 00:00 0 
Size:               4096 kB
AnonHugePages:      4096 kB
7f0000400000-7f0000600000 rw-p 00000000 00:00 0 
Size:               2048 kB
AnonHugePages:         0 kB
7f0000600000-7f0000a00000 rw-p 00000000 00:00 0 
AnonHugePages:      2048 kB
55d000000000-55d000001000 r--p 00000000 08:01 123   /usr/bin/x
AnonHugePages:      9999 kB
`
	for _, c := range []struct {
		lo, hi       uintptr
		huge, mapped int64
	}{
		{0x7f0000000000, 0x7f0000400000, 4 << 20, 4 << 20},
		{0x7f0000100000, 0x7f0000700000, 6 << 20, 10 << 20}, // overlaps all three anonymous mappings
		{0x7f0000400000, 0x7f0000600000, 0, 2 << 20},
		{0x7f0000a00000, 0x7f0000b00000, 0, 0}, // past them
	} {
		huge, mapped, err := hugeBytesIn(strings.NewReader(smaps), c.lo, c.hi)
		if err != nil || huge != c.huge || mapped != c.mapped {
			t.Errorf("[%#x, %#x): %d of %d, %v; want %d of %d", c.lo, c.hi, huge, mapped, err, c.huge, c.mapped)
		}
	}
	if m := selectedMode("always [madvise] never\n"); m != "madvise" {
		t.Errorf("selectedMode: %q, want madvise", m)
	}
	if m := selectedMode("always madvise never"); m != "" {
		t.Errorf("selectedMode without a choice: %q, want \"\"", m)
	}
	// The real file: a streamed buffer is a mapping of its own, unmerged with the
	// weights' arenas around it, so its count is its own.
	w := allocTiles(3 << 20)
	defer freeTiles(w)
	b := AllocStreamed(4<<20 - 100)
	defer FreeStreamed(b)
	w2 := allocTiles(3 << 20)
	defer freeTiles(w2)
	for i := range b {
		b[i] = 1
	}
	// A mapping like an arena right after it, where the address is free: without
	// keepApart the kernel would merge the two.
	end := unsafe.Add(unsafe.Pointer(&b[0]), 4<<20)
	if p, err := unix.MmapPtr(-1, 0, end, hugePage, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON|unix.MAP_FIXED_NOREPLACE); err == nil {
		defer unix.MunmapPtr(p, hugePage)
		adviseHugePages(unsafe.Slice((*byte)(p), hugePage))
		*(*byte)(p) = 1
	} else {
		t.Logf("no mapping next to the buffer (%v): merging not checked", err)
	}
	if huge, mapped, ok := HugePageBytes(b); !ok || huge < 0 || mapped != 4<<20 || huge > mapped {
		t.Errorf("HugePageBytes of a 4 MiB streamed buffer: %d of a %d-byte mapping, %v; want a 4 MiB mapping", huge, mapped, ok)
	}
}
