//go:build unix

package cpu

import (
	"slices"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePage is the size of an x86-64 transparent huge page. Every arena starts on a
// multiple of it and spans whole ones, so that each 2 MiB of it can be one huge page.
const hugePage = 2 << 20

// arenaBytes is the size of the arenas that tiled copies are cut from (a copy of at
// least half of it gets an arena of its own). Only the part handed out becomes
// resident, in whole huge pages: the one an arena's last copy ends in is resident
// whole, so arenas are large. On llama-1b Q4_0 (scripts/memory-check.sh), bench's peak
// RSS was 8.7 MiB above one mapping per copy with 256 MiB arenas (10.5 with 64 MiB),
// its RSS while decoding 2.5 MiB above.
const arenaBytes = 256 << 20

// tileArena is one mapping that copies are cut from, one after another.
type tileArena struct {
	base       unsafe.Pointer // on a huge page boundary
	size, used uintptr        // bytes mapped (whole huge pages), bytes handed out
	live       int            // copies handed out and not yet freed
}

// arenas hands out the tiled copies. Each copy used to be a mapping of its own, which
// left the part of it past its last whole huge page (and all of any copy under 2 MiB,
// such as llama-1b's K and V) in 4 KiB pages: 37 of llama-1b Q4_0's 571 MiB of
// tiles. Cut one after another from arenas of huge pages, every copy is streamed from
// huge pages. On a 2-core AMD EPYC (Zen 5), two copies of llama-1b decoding in one
// process by turns of 16 tokens (50 turns, each copy first in one run): Q8_0 read
// 1.055× and 1.073× faster from arenas (median turn; 40 and 33 of 50 faster), Q4_K_M
// 1.017× and 0.983×, Q4_0 0.997× and 0.993× (means 1.028× and 1.020×), F16 1.014×
// and 1.016× (30 turns).
type arenas struct {
	mu    sync.Mutex
	open  []*tileArena                  // the arenas that small copies are cut from (a first fit)
	owner map[unsafe.Pointer]*tileArena // each live copy's first byte → its arena
}

// tileMem is the process's arenas for tiled copies and streamed buffers.
var tileMem arenas

// allocTiles returns n zeroed bytes for a tiled copy, outside the Go heap: the copies
// are most of a model's resident memory, and on the heap they would raise the garbage
// collector's goal by their size, letting that much garbage (the scratch of finished
// requests) stay resident before a collection. They are cut from arenas that ask for
// huge pages (where the system gives them on request), since the tiles are streamed
// whole every step. It falls back to the heap when the mapping fails.
func allocTiles(n int) []byte { return tileMem.alloc(n) }

// freeTiles releases a copy made by allocTiles; b must not be used afterwards.
func freeTiles(b []byte) { tileMem.free(b) }

// allocStreamed returns n zeroed bytes for AllocStreamed: an arena of their own, whose
// flags keepApart makes differ from the weights' arenas, so that the kernel never
// merges the two mappings.
func allocStreamed(n int) []byte { return tileMem.allocIn(n, true) }

func (a *arenas) alloc(n int) []byte { return a.allocIn(n, false) }

// allocIn cuts n bytes from an arena, one of their own where own is set (kept apart
// from the others: keepApart) or n is at least half an arena, else the first open
// arena with room (or a new one).
func (a *arenas) allocIn(n int, own bool) []byte {
	if n == 0 {
		return nil
	}
	need := (uintptr(n) + 63) &^ 63 // each copy on a cache line of its own
	a.mu.Lock()
	defer a.mu.Unlock()
	var ar *tileArena
	if own || need >= arenaBytes/2 {
		if ar = mapArena((need + hugePage - 1) &^ (hugePage - 1)); ar != nil && own {
			keepApart(unsafe.Slice((*byte)(ar.base), ar.size))
		}
	} else {
		// The first arena with room: a copy that does not fit at the end of one
		// arena leaves room there for later, smaller ones, so that the huge page the
		// arena's last copy ends in is filled rather than resident half empty.
		for _, o := range a.open {
			if o.used+need <= o.size {
				ar = o
				break
			}
		}
		if ar == nil {
			if ar = mapArena(arenaBytes); ar != nil {
				a.open = append(a.open, ar)
			}
		}
	}
	if ar == nil {
		return make([]byte, n)
	}
	p := unsafe.Add(ar.base, ar.used)
	ar.used += need
	ar.live++
	if a.owner == nil {
		a.owner = map[unsafe.Pointer]*tileArena{}
	}
	a.owner[p] = ar
	return unsafe.Slice((*byte)(p), n)
}

func (a *arenas) free(b []byte) {
	if len(b) == 0 {
		return
	}
	p := unsafe.Pointer(unsafe.SliceData(b))
	a.mu.Lock()
	defer a.mu.Unlock()
	ar := a.owner[p]
	if ar == nil {
		return // a heap fallback: the garbage collector's
	}
	delete(a.owner, p)
	if ar.live--; ar.live == 0 {
		a.open = slices.DeleteFunc(a.open, func(o *tileArena) bool { return o == ar })
		_ = unix.MunmapPtr(ar.base, ar.size)
		return
	}
	// The arena lives on: give back the copy's whole pages (they read as zeros after).
	page := uintptr(unix.Getpagesize())
	lo := (uintptr(p) + page - 1) &^ (page - 1)
	hi := (uintptr(p) + uintptr(len(b))) &^ (page - 1)
	if hi > lo {
		_ = unix.Madvise(unsafe.Slice((*byte)(unsafe.Add(p, lo-uintptr(p))), hi-lo), unix.MADV_DONTNEED)
	}
}

// mapArena maps size bytes (whole huge pages) starting on a huge page boundary, asks
// for huge pages under them, and returns them as an empty arena; nil if mapping fails.
func mapArena(size uintptr) *tileArena {
	p, err := unix.MmapPtr(-1, 0, nil, size+hugePage, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return nil
	}
	start := uintptr(p)
	aligned := (start + hugePage - 1) &^ (hugePage - 1)
	if aligned > start {
		_ = unix.MunmapPtr(p, aligned-start)
	}
	// The rest past aligned+size: never empty, as aligned-start < hugePage.
	_ = unix.MunmapPtr(unsafe.Add(p, aligned-start+size), hugePage-(aligned-start))
	base := unsafe.Add(p, aligned-start)
	adviseHugePages(unsafe.Slice((*byte)(base), size))
	return &tileArena{base: base, size: size}
}
