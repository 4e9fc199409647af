//go:build unix

package synth

import "golang.org/x/sys/unix"

// statfsFree returns the bytes available to unprivileged users on dir's filesystem.
func statfsFree(dir string) (uint64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return uint64(st.Bavail) * uint64(st.Bsize), nil // field types differ between systems
}
