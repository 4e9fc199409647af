package cpu

import "fmt"

// ReadPattern is one way of streaming through memory, as the decode kernels do: the
// buffer is cut into Streams equal parts that are read side by side, ReadLine bytes of
// each in turn, with or without software prefetch ReadPrefetchAhead bytes ahead of
// every stream. Which pattern reads fastest differs between CPUs (one stream on a
// 2-core AMD EPYC; several streams with prefetch on Intel Xeon, where one stream per
// core leaves most of the bandwidth unused), so a bandwidth probe tries each.
type ReadPattern struct {
	Streams  int  // parts read side by side (1 or 4)
	Prefetch bool // software prefetch ahead of every stream (assembly only)
}

const (
	// ReadLine is the bytes of a stream ReadSum reads before going to the next stream.
	ReadLine = 64
	// ReadPrefetchAhead is how far ahead of each stream the prefetching patterns
	// prefetch: the distance the Intel decode kernels use (PFD in tile_amd64.s).
	ReadPrefetchAhead = 1024
)

// String names the pattern: "1 stream", "4 streams + prefetch".
func (p ReadPattern) String() string {
	s := fmt.Sprintf("%d stream", p.Streams)
	if p.Streams != 1 {
		s += "s"
	}
	if p.Prefetch {
		s += " + prefetch"
	}
	return s
}

// ReadSum reads every byte of b in pattern p and returns the sum of its little-endian
// 64-bit words (wrapping), so that no read can be left out. Each stream is
// len(b)/Streams bytes rounded down to whole lines; the bytes after the last whole
// line of the last stream are read one word at a time.
func ReadSum(b []byte, p ReadPattern) uint64 {
	streams := max(1, p.Streams)
	lines := len(b) / (ReadLine * streams)
	var s uint64
	if lines > 0 {
		s = readStreams(b[:lines*ReadLine*streams], lines, streams, p.Prefetch)
	}
	return s + readWordsGo(b[lines*ReadLine*streams:])
}

// readStreamsGo is readStreams without assembly (prefetch is ignored: Go has none).
func readStreamsGo(b []byte, lines, streams int) uint64 {
	var s uint64
	stride := lines * ReadLine
	for l := range lines {
		for k := range streams {
			s += readWordsGo(b[k*stride+l*ReadLine : k*stride+(l+1)*ReadLine])
		}
	}
	return s
}

// readWordsGo sums b's little-endian 64-bit words; a last partial word is zero-padded.
func readWordsGo(b []byte) uint64 {
	var a [8]uint64 // eight independent sums: the loop waits on loads, not on one add chain
	for len(b) >= 64 {
		for i := range a {
			a[i] += le64(b[8*i:])
		}
		b = b[64:]
	}
	for len(b) >= 8 {
		a[0] += le64(b)
		b = b[8:]
	}
	var last [8]byte
	copy(last[:], b)
	return a[0] + a[1] + a[2] + a[3] + a[4] + a[5] + a[6] + a[7] + le64(last[:])
}

func le64(b []byte) uint64 {
	_ = b[7]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// AllocStreamed returns n zeroed bytes in the memory the engine keeps the weights it
// streams every step in (its tiled and copied matrices: huge pages where the system
// gives them), for a probe that should read memory as decode does: in a mapping of
// their own, which the kernel does not merge with the weights' (HugePageBytes then
// counts the buffer's huge pages alone). FreeStreamed releases it.
func AllocStreamed(n int) []byte { return allocStreamed(n) }

// FreeStreamed releases memory from AllocStreamed.
func FreeStreamed(b []byte) { freeTiles(b) }
