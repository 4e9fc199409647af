package cpu

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// wordSum is ReadSum's reference: the plain sum of b's little-endian words, a last
// partial word zero-padded.
func wordSum(b []byte) uint64 {
	var s uint64
	for i := 0; i < len(b); i += 8 {
		var w [8]byte
		copy(w[:], b[i:])
		s += binary.LittleEndian.Uint64(w[:])
	}
	return s
}

// TestReadSum checks every pattern, and the pure-Go loops, against the plain word sum
// on lengths that leave partial lines, partial streams and partial words.
func TestReadSum(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 1<<20+300)
	for i := range buf {
		buf[i] = byte(r.Uint32())
	}
	pats := append(ReadPatterns(), ReadPattern{Streams: 3}, ReadPattern{Streams: 0})
	for _, n := range []int{0, 7, 63, 64, 255, 256, 257, 4096 + 13, 1 << 16, 1<<20 + 300} {
		b := buf[len(buf)-n:] // an unaligned start too
		want := wordSum(b)
		for _, p := range pats {
			if got := ReadSum(b, p); got != want {
				t.Errorf("ReadSum(%d bytes, %v) = %#x, want %#x", n, p, got, want)
			}
		}
		for _, s := range []int{1, 4} {
			lines := n / (ReadLine * s)
			if got := readStreamsGo(b[:lines*ReadLine*s], lines, s) + readWordsGo(b[lines*ReadLine*s:]); got != want {
				t.Errorf("readStreamsGo(%d bytes, %d streams) = %#x, want %#x", n, s, got, want)
			}
		}
	}
}

func TestReadPatternString(t *testing.T) {
	for p, want := range map[ReadPattern]string{{Streams: 1}: "1 stream", {Streams: 4, Prefetch: true}: "4 streams + prefetch"} {
		if got := p.String(); got != want {
			t.Errorf("%#v.String() = %q, want %q", p, got, want)
		}
	}
}

// BenchmarkReadSum reads a 256 MiB buffer (beyond the caches) in each pattern, one thread.
func BenchmarkReadSum(b *testing.B) {
	buf := make([]byte, 256<<20)
	for i := range buf {
		buf[i] = byte(i)
	}
	for _, p := range ReadPatterns() {
		b.Run(p.String(), func(b *testing.B) {
			b.SetBytes(int64(len(buf)))
			for b.Loop() {
				ReadSum(buf, p)
			}
		})
	}
}
