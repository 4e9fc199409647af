//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package telemetry

import "time"

// processCPUTime is unknown on this platform: the Fake reads it as idle.
func processCPUTime() (time.Duration, bool) { return 0, false }

// fileLock is a no-op here: this platform has no flock, so power limits are guarded
// within one process only.
type fileLock struct{}

func tryLock(string) (*fileLock, error) { return &fileLock{}, nil }

func (l *fileLock) unlock() error { return nil }
