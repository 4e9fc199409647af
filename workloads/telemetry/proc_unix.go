//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package telemetry

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// processCPUTime returns the CPU time (user + system) this process has used.
func processCPUTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}

// fileLock is an exclusive advisory lock (flock) on an open file; the kernel drops it
// when the process ends, however it ends.
type fileLock struct{ f *os.File }

// tryLock takes the exclusive lock on path without waiting and writes this process's
// pid into the file. When another process holds it, the error is a *LockedError
// naming that process's pid when the file says it.
func tryLock(path string) (*fileLock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			le := &LockedError{Path: path}
			buf := make([]byte, 32)
			if n, _ := f.ReadAt(buf, 0); n > 0 {
				le.PID, _ = strconv.Atoi(strings.TrimSpace(string(buf[:n])))
			}
			return nil, le
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &fileLock{f: f}, nil
}

// unlock empties the file (no pid left behind) and releases the lock. The file
// stays: removing it would let a process that opened it lock a name another process
// has since created anew.
func (l *fileLock) unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	l.f.Truncate(0)
	err := syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	return err
}
