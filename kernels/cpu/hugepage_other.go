//go:build !linux

package cpu

// adviseHugePages does nothing where there is no transparent huge page advice.
func adviseHugePages([]byte) {}

// keepApart does nothing here (see the Linux one).
func keepApart([]byte) {}

// HugePageBytes reports that huge page use cannot be read here.
func HugePageBytes([]byte) (huge, mapped int64, ok bool) { return 0, 0, false }

// HugePageMode returns "": there is no transparent huge page setting to read here.
func HugePageMode() string { return "" }
