//go:build !linux

package cpu

// adviseHugePages does nothing where there is no transparent huge page advice.
func adviseHugePages([]byte) {}
