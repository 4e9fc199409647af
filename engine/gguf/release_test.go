package gguf

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"llmbench/kernels"
)

// residentOf returns the resident bytes of the process's mappings of path.
func residentOf(t *testing.T, path string) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no smaps: %v", err)
	}
	defer f.Close()
	var rss int64
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		switch {
		case len(fields) == 0:
		case strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":"):
			in = fields[len(fields)-1] == path
		case in && fields[0] == "Rss:":
			kb, _ := strconv.ParseInt(fields[1], 10, 64)
			rss += kb << 10
		}
	}
	return rss
}

// TestRelease checks that Release drops a mapped tensor's pages from the process's
// resident memory, that the bytes read the same afterwards (back from the file), that
// it refuses bytes outside the file, and that it leaves a parsed buffer alone.
func TestRelease(t *testing.T) {
	const n = 1 << 20
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.AddKV("general.architecture", "llama")
	w.AddTensor("big", kernels.F32, n/4)
	if err := w.WriteHeader(); err != nil {
		t.Fatal(err)
	}
	tw, _ := w.BeginTensor("big")
	pattern := make([]byte, n)
	for i := range pattern {
		pattern[i] = byte(i*7 + i>>12)
	}
	tw.Write(pattern)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "big.gguf")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ti, _ := f.Tensor("big")
	data := f.TensorData(ti)
	if !bytes.Equal(data, pattern) {
		t.Fatal("tensor bytes differ from those written")
	}
	before := residentOf(t, path)
	if before < n/2 {
		t.Skipf("only %d bytes of the mapping resident after reading %d", before, n)
	}
	if err := f.Release(data); err != nil {
		t.Fatal(err)
	}
	after := residentOf(t, path)
	if after > before-n+2*int64(os.Getpagesize()) {
		t.Fatalf("resident %d bytes before Release, %d after: want %d fewer (less two partial pages)", before, after, n)
	}
	if !bytes.Equal(data, pattern) {
		t.Fatal("tensor bytes differ after Release")
	}
	if err := f.Release(pattern); err == nil {
		t.Fatal("Release of bytes outside the mapping: no error")
	}
	p, err := Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	pd := p.TensorData(ti)
	if err := p.Release(pd); err != nil || !bytes.Equal(pd, pattern) {
		t.Fatalf("Release on a parsed buffer: %v (bytes kept: %v)", err, bytes.Equal(pd, pattern))
	}
}
