//go:build !unix

package store

import "os"

// pidAlive reports whether a process with this id exists, as far as the OS tells.
func pidAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}
