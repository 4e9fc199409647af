//go:build !unix

package micro

func resetPeakRSS() bool { return false }

func peakRSS() int64 { return 0 }
