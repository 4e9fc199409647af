//go:build windows

package synth

import "golang.org/x/sys/windows"

// statfsFree returns the bytes available to the caller on dir's volume.
func statfsFree(dir string) (uint64, error) {
	p, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		return 0, err
	}
	var avail, total, free uint64
	if err := windows.GetDiskFreeSpaceEx(p, &avail, &total, &free); err != nil {
		return 0, err
	}
	return avail, nil
}
