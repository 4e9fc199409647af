package tokenizer

import "unicode/utf8"

// StreamDecoder turns a stream of token ids into text chunks that never end
// in the middle of a UTF-8 character: bytes of an incomplete character are
// held back until the tokens that complete it arrive. Pieces are emitted as
// llama.cpp's examples print them (an SPM prompt's leading space is kept).
type StreamDecoder struct {
	t   *Tokenizer
	buf []byte
}

// NewStreamDecoder returns a StreamDecoder for t.
func NewStreamDecoder(t *Tokenizer) *StreamDecoder {
	return &StreamDecoder{t: t}
}

// Add appends the piece of id and returns the text that is now complete
// (possibly empty).
func (d *StreamDecoder) Add(id int32) string {
	d.buf = append(d.buf, d.t.Piece(id)...)
	keep := incompleteTail(d.buf)
	out := string(d.buf[:len(d.buf)-keep])
	d.buf = append(d.buf[:0], d.buf[len(d.buf)-keep:]...)
	return out
}

// Flush returns whatever is still held back (an unfinished character, as
// raw bytes) and resets the decoder.
func (d *StreamDecoder) Flush() string {
	out := string(d.buf)
	d.buf = d.buf[:0]
	return out
}

// incompleteTail returns how many trailing bytes of b form the start of a
// multi-byte UTF-8 character that more bytes could still complete.
func incompleteTail(b []byte) int {
	for k := 1; k <= 3 && k <= len(b); k++ {
		c := b[len(b)-k]
		if c&0xC0 == 0x80 {
			continue // continuation byte: look further back
		}
		need := 0
		switch {
		case c&0xE0 == 0xC0:
			need = 2
		case c&0xF0 == 0xE0:
			need = 3
		case c&0xF8 == 0xF0:
			need = 4
		}
		if need > k && !utf8.FullRune(b[len(b)-k:]) {
			return k
		}
		return 0
	}
	return 0
}
