//go:build !linux

package telemetry

import (
	"errors"
	"io"
	"os"
)

// preadFile reads from f at off; a short read at the end of the file is not an error.
func preadFile(f *os.File, b []byte, off int64) (int, error) {
	n, err := f.ReadAt(b, off)
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return n, err
}
