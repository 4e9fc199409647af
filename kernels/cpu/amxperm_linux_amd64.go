//go:build linux && amd64 && !purego

package cpu

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// requestAMX asks Linux for the AMX tile-data state (XTILEDATA, xstate component 18):
// the kernel leaves it disabled (XFD) until a process asks, and an AMX instruction
// that touches tile data without the permission raises SIGILL. The permission is the
// process's: once granted, every thread (present and future) may use the tiles, so Go's
// moving goroutines between threads does not matter. Each kernel call sets up its own
// tile configuration (LDTILECFG) and releases it (TILERELEASE) before it returns; Go
// never preempts assembly functions asynchronously (they are not async safe points),
// so a goroutine cannot change threads in the middle of one, and a signal arriving
// during one is delivered with the tile state saved in the signal frame by the kernel
// (XSAVE, about 11 KiB with AMX; Go's signal stacks are 32 KiB, and the request fails
// with ENOSPC where a thread's alternate stack is too small) and restored on return.
func requestAMX() error {
	const (
		archGetXcompPerm  = 0x1022
		archReqXcompPerm  = 0x1023
		xfeatureXtiledata = 18
	)
	if _, _, e := unix.Syscall(unix.SYS_ARCH_PRCTL, archReqXcompPerm, xfeatureXtiledata, 0); e != 0 {
		return fmt.Errorf("arch_prctl(ARCH_REQ_XCOMP_PERM, XTILEDATA): %w", e)
	}
	var perm uint64
	if _, _, e := unix.Syscall(unix.SYS_ARCH_PRCTL, archGetXcompPerm, uintptr(unsafe.Pointer(&perm)), 0); e != 0 {
		return fmt.Errorf("arch_prctl(ARCH_GET_XCOMP_PERM): %w", e)
	}
	if perm&(1<<xfeatureXtiledata) == 0 {
		return fmt.Errorf("arch_prctl granted xstate features %#x, without XTILEDATA", perm)
	}
	return nil
}
