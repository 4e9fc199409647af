//go:build !linux

package serving

import "time"

// kernelSleep sleeps d; outside Linux it falls back to the runtime's timer.
func kernelSleep(d time.Duration) { time.Sleep(d) }
