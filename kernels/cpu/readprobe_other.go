//go:build !amd64 || purego

package cpu

// ReadPatterns lists the patterns ReadSum runs here: one and four streams (no
// software prefetch without assembly).
func ReadPatterns() []ReadPattern { return []ReadPattern{{Streams: 1}, {Streams: 4}} }

// readStreams reads b as streams parts of lines lines each (ReadSum's pattern).
func readStreams(b []byte, lines, streams int, _ bool) uint64 {
	return readStreamsGo(b, lines, streams)
}
