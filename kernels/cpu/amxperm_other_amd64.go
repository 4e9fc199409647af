//go:build !linux && amd64 && !purego

package cpu

import "errors"

// requestAMX reports that the AMX tile-data permission is only requested on Linux
// (other systems' permission models are not handled, so AMX stays off there).
func requestAMX() error {
	return errors.New("AMX tile-data permission is only requested on Linux")
}
