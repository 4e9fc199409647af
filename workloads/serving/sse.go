package serving

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// errMalformed marks a stream line that is not server-sent events.
var errMalformed = errors.New("malformed SSE")

// MaxLineBytes caps one line of an event stream: a longer one fails the request as
// malformed instead of growing the reader's buffer without bound.
const MaxLineBytes = 1 << 20

// sseReader reads the data payloads of a server-sent event stream. Payloads alias the
// reader's buffer and are valid until the next call, so a stream is parsed without
// allocating per chunk.
type sseReader struct {
	br   *bufio.Reader
	long []byte
}

// next returns the next data payload (without "data:" and one leading space), io.EOF
// at a clean end, errMalformed (wrapped with the line) for a line that is not SSE or
// is longer than MaxLineBytes, or the transport's error.
func (s *sseReader) next() ([]byte, error) {
	for {
		line, err := s.br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			s.long = append(s.long[:0], line...)
			for err == bufio.ErrBufferFull {
				line, err = s.br.ReadSlice('\n')
				if len(s.long)+len(line) > MaxLineBytes {
					return nil, &malformedError{line: string(truncate(s.long, 40)), long: true}
				}
				s.long = append(s.long, line...)
			}
			line = s.long
		}
		if err != nil && !(err == io.EOF && len(line) > 0) {
			return nil, err
		}
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case len(line) == 0, line[0] == ':':
			continue // event separator or comment
		case bytes.HasPrefix(line, []byte("data:")):
			p := line[5:]
			if len(p) > 0 && p[0] == ' ' {
				p = p[1:]
			}
			return p, nil
		case bytes.HasPrefix(line, []byte("event:")), bytes.HasPrefix(line, []byte("id:")), bytes.HasPrefix(line, []byte("retry:")):
			continue
		default:
			return nil, &malformedError{line: string(truncate(line, 80))}
		}
	}
}

type malformedError struct {
	line string
	long bool // longer than MaxLineBytes; line holds its start
}

func (e *malformedError) Error() string {
	if e.long {
		return fmt.Sprintf("malformed SSE: a line longer than %d bytes: %s…", MaxLineBytes, strconv.Quote(e.line))
	}
	return "malformed SSE: " + strconv.Quote(e.line)
}
func (e *malformedError) Unwrap() error { return errMalformed }

func truncate(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	b = b[:n]
	for len(b) > 0 && !utf8.Valid(b) {
		b = b[:len(b)-1]
	}
	return b
}

// jsonObject reports whether p looks like one complete JSON object (cheap structural
// check: braces balance outside strings and nothing follows the closing brace).
func jsonObject(p []byte) bool {
	p = bytes.TrimSpace(p)
	if len(p) < 2 || p[0] != '{' {
		return false
	}
	depth, in, esc := 0, false, false
	for i, c := range p {
		if in {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				in = false
			}
			continue
		}
		switch c {
		case '"':
			in = true
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i == len(p)-1
			}
			if depth < 0 {
				return false
			}
		}
	}
	return false
}

// jsonKey returns the offset just after `"key":` in p (the start of the value) or -1.
// It matches the key at any depth; the payloads it reads have unambiguous keys.
func jsonKey(p []byte, key string) int {
	from := 0
	for {
		i := bytes.Index(p[from:], []byte(key))
		if i < 0 {
			return -1
		}
		i += from
		end := i + len(key)
		from = end
		if i == 0 || p[i-1] != '"' || end >= len(p) || p[end] != '"' || (i >= 2 && p[i-2] == '\\') {
			continue
		}
		j := end + 1
		for j < len(p) && (p[j] == ' ' || p[j] == '\t' || p[j] == '\n' || p[j] == '\r') {
			j++
		}
		if j < len(p) && p[j] == ':' {
			j++
			for j < len(p) && (p[j] == ' ' || p[j] == '\t') {
				j++
			}
			return j
		}
	}
}

// jsonString reads the string value at p[at:]: its raw (still escaped) content, or
// null/ok=false when the value is not a string.
func jsonString(p []byte, at int) (raw []byte, ok bool) {
	if at < 0 || at >= len(p) || p[at] != '"' {
		return nil, false
	}
	for i := at + 1; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '"':
			return p[at+1 : i], true
		}
	}
	return nil, false
}

// jsonInt reads the integer value at p[at:].
func jsonInt(p []byte, at int) (int, bool) {
	if at < 0 || at >= len(p) {
		return 0, false
	}
	n, i, neg := 0, at, false
	if p[i] == '-' {
		neg, i = true, i+1
	}
	start := i
	for i < len(p) && p[i] >= '0' && p[i] <= '9' {
		n = n*10 + int(p[i]-'0')
		i++
	}
	if i == start {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}

// jsonFloat reads the number at p[at:].
func jsonFloat(p []byte, at int) (float64, bool) {
	if at < 0 || at >= len(p) {
		return 0, false
	}
	i := at
	for i < len(p) && (p[i] == '-' || p[i] == '+' || p[i] == '.' || p[i] == 'e' || p[i] == 'E' || (p[i] >= '0' && p[i] <= '9')) {
		i++
	}
	v, err := strconv.ParseFloat(string(p[at:i]), 64)
	return v, err == nil
}

// jsonNonEmptyArray reports whether the value at p[at:] is an array with an element.
func jsonNonEmptyArray(p []byte, at int) bool {
	if at < 0 || at >= len(p) || p[at] != '[' {
		return false
	}
	for i := at + 1; i < len(p); i++ {
		switch p[i] {
		case ' ', '\t', '\n', '\r':
		case ']':
			return false
		default:
			return true
		}
	}
	return false
}

// jsonBool reads the boolean value at p[at:].
func jsonBool(p []byte, at int) (v, ok bool) {
	switch {
	case at < 0 || at >= len(p):
		return false, false
	case bytes.HasPrefix(p[at:], []byte("true")):
		return true, true
	case bytes.HasPrefix(p[at:], []byte("false")):
		return false, true
	}
	return false, false
}

// jsonTopBool reports whether the first "key" in p whose value is a boolean is true:
// it skips same-named keys with other values (llama.cpp's generation_settings holds a
// "stop" array beside the top-level "stop" flag).
func jsonTopBool(p []byte, key string) bool {
	for from := 0; from < len(p); {
		at := jsonKey(p[from:], key)
		if at < 0 {
			return false
		}
		if v, ok := jsonBool(p, from+at); ok {
			return v
		}
		from += at
	}
	return false
}

// jsonIsNull reports whether the value at p[at:] is null (or absent).
func jsonIsNull(p []byte, at int) bool {
	return at < 0 || bytes.HasPrefix(p[at:], []byte("null"))
}

// appendUnescaped appends the decoded form of a raw JSON string to dst.
func appendUnescaped(dst, raw []byte) []byte {
	if bytes.IndexByte(raw, '\\') < 0 {
		return append(dst, raw...)
	}
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' || i+1 >= len(raw) {
			dst = append(dst, c)
			continue
		}
		i++
		switch raw[i] {
		case 'n':
			dst = append(dst, '\n')
		case 't':
			dst = append(dst, '\t')
		case 'r':
			dst = append(dst, '\r')
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'u':
			if i+4 >= len(raw) {
				return dst
			}
			r := hex4(raw[i+1 : i+5])
			i += 4
			if r >= 0xD800 && r < 0xDC00 && i+6 < len(raw) && raw[i+1] == '\\' && raw[i+2] == 'u' {
				lo := hex4(raw[i+3 : i+7])
				if lo >= 0xDC00 && lo < 0xE000 {
					r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
					i += 6
				}
			}
			dst = utf8.AppendRune(dst, r)
		default:
			dst = append(dst, raw[i])
		}
	}
	return dst
}

func hex4(b []byte) rune {
	var r rune
	for _, c := range b {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return utf8.RuneError
		}
	}
	return r
}
