package serving

import (
	"syscall"
	"time"
)

// kernelSleep sleeps d in the kernel (nanosleep: high-resolution timer, microseconds
// late), not on the runtime's millisecond-grained poller. The runtime hands the
// processor to other goroutines while the thread sleeps.
func kernelSleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
	}
}
