//go:build !linux || !(amd64 || arm64)

package telemetry

import (
	"errors"
	"io"
	"os"
)

// preadFile reads from f at off with ReadAt (the raw call of pread_linux64.go passes
// the offset in one register, as only 64-bit Linux takes it); a short read at the end
// of the file is not an error.
func preadFile(f *os.File, b []byte, off int64) (int, error) {
	n, err := f.ReadAt(b, off)
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return n, err
}
