//go:build amd64 && !purego

package cpu

import "golang.org/x/sys/cpu"

// ReadPatterns lists the patterns ReadSum runs here: one and four streams, each with
// and without software prefetch (the assembly needs AVX2; without it, no prefetch).
func ReadPatterns() []ReadPattern {
	if !cpu.X86.HasAVX2 {
		return []ReadPattern{{Streams: 1}, {Streams: 4}}
	}
	return []ReadPattern{{Streams: 1}, {Streams: 1, Prefetch: true}, {Streams: 4}, {Streams: 4, Prefetch: true}}
}

// readStreams reads b as streams parts of lines lines each (ReadSum's pattern).
func readStreams(b []byte, lines, streams int, prefetch bool) uint64 {
	if !cpu.X86.HasAVX2 || (streams != 1 && streams != 4) {
		return readStreamsGo(b, lines, streams)
	}
	_ = b[lines*ReadLine*streams-1]
	switch {
	case streams == 1 && prefetch:
		return readSum1pf(lines, &b[0])
	case streams == 1:
		return readSum1(lines, &b[0])
	case prefetch:
		return readSum4pf(lines, &b[0], lines*ReadLine)
	}
	return readSum4(lines, &b[0], lines*ReadLine)
}

//go:noescape
func readSum1(lines int, p *byte) uint64

//go:noescape
func readSum1pf(lines int, p *byte) uint64

//go:noescape
func readSum4(lines int, p *byte, stride int) uint64

//go:noescape
func readSum4pf(lines int, p *byte, stride int) uint64
