package server

import (
	"strings"
	"testing"
)

// TestQueueBound checks the queue bound derived from the memory available.
func TestQueueBound(t *testing.T) {
	const gib = 1 << 30
	for _, c := range []struct {
		avail   int64
		context int
		want    int
		how     string
	}{
		{0, 4096, MinQueue, "unknown"},
		{-1, 512, MinQueue, "unknown"},
		// 5 % of 16 GiB over 64 KiB + 24 B × 4096 = 160 KiB: 5242.
		{16 * gib, 4096, 5242, "5 % of the 16.0 GiB available, 160 KiB a waiting request"},
		{16 * gib, 0, 5242, "160 KiB"},
		// 5 % of 16 GiB over 64 KiB + 24 B × 512 = 76 KiB: 11037.
		{16 * gib, 512, 11037, "76 KiB"},
		{64 << 20, 4096, MinQueue, "0.1 GiB"},
		{1 << 50, 512, MaxQueueBound, "available"},
	} {
		n, how := QueueBound(c.avail, c.context)
		if n != c.want || !strings.Contains(how, c.how) {
			t.Errorf("QueueBound(%d, %d) = %d, %q; want %d, %q", c.avail, c.context, n, how, c.want, c.how)
		}
	}
	if n, _ := QueueBound(16<<30, 4096); n < 1000 {
		t.Errorf("16 GiB gives a queue of %d, want thousands", n)
	}
}
