package telemetry

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"
)

// Bandwidth is the result of a memory read-bandwidth probe.
type Bandwidth struct {
	Bytes   int64     `json:"bytes"`   // buffer size read per probe
	Threads int       `json:"threads"` // goroutines reading it, each a contiguous share
	Samples []float64 `json:"samples"` // bytes per second of each probe, in order
	Median  float64   `json:"median"`  // bytes per second, the median of Samples
}

// GBps returns the median in gigabytes (10⁹ bytes) per second.
func (b Bandwidth) GBps() float64 { return b.Median / 1e9 }

// MeasureReadBandwidth measures how fast threads goroutines can read a buffer of size
// bytes: each probe sums the whole buffer, every thread its own contiguous share, and
// the figure is bytes ÷ seconds. The buffer is written once first (untimed) so every
// page is resident. The median of probes is reported because memory bandwidth varies
// from run to run. threads ≤ 0 means all cores.
func MeasureReadBandwidth(ctx context.Context, size int64, threads, probes int) (Bandwidth, error) {
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	if probes < 1 {
		return Bandwidth{}, fmt.Errorf("bandwidth: %d probes (minimum 1)", probes)
	}
	const minSize = 1 << 20
	if size < minSize {
		return Bandwidth{}, fmt.Errorf("bandwidth: buffer of %d bytes is too small (minimum 1 MiB)", size)
	}
	words := int(size / 8)
	words -= words % (8 * threads) // every share a multiple of the unrolled loop
	buf := make([]uint64, words)
	parallel(threads, words, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			buf[i] = uint64(i) * 0x9E3779B97F4A7C15
		}
	})
	b := Bandwidth{Bytes: int64(words) * 8, Threads: threads}
	var sums = make([]uint64, threads)
	for range probes {
		if err := ctx.Err(); err != nil {
			return b, err
		}
		t0 := time.Now()
		parallelIndexed(threads, words, func(t, lo, hi int) { sums[t] += sumWords(buf[lo:hi]) })
		el := time.Since(t0)
		if el <= 0 {
			return b, errors.New("bandwidth: clock did not advance")
		}
		b.Samples = append(b.Samples, float64(b.Bytes)/el.Seconds())
	}
	runtime.KeepAlive(sums)
	s := slices.Clone(b.Samples)
	slices.Sort(s)
	if n := len(s); n%2 == 1 {
		b.Median = s[n/2]
	} else {
		b.Median = (s[n/2-1] + s[n/2]) / 2
	}
	return b, nil
}

// sumWords adds up s with eight independent accumulators so the loop is limited by
// loads, not by the dependency chain of one sum. len(s) must be a multiple of 8.
func sumWords(s []uint64) uint64 {
	var a0, a1, a2, a3, a4, a5, a6, a7 uint64
	for len(s) >= 8 {
		x := s[:8:8]
		a0 += x[0]
		a1 += x[1]
		a2 += x[2]
		a3 += x[3]
		a4 += x[4]
		a5 += x[5]
		a6 += x[6]
		a7 += x[7]
		s = s[8:]
	}
	return a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7
}

func parallel(threads, n int, f func(lo, hi int)) {
	parallelIndexed(threads, n, func(_, lo, hi int) { f(lo, hi) })
}

// parallelIndexed runs f on threads contiguous shares of [0, n), each a multiple of 8.
func parallelIndexed(threads, n int, f func(t, lo, hi int)) {
	share := n / threads
	var wg sync.WaitGroup
	for t := range threads {
		lo, hi := t*share, (t+1)*share
		if t == threads-1 {
			hi = n
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(t, lo, hi)
		}()
	}
	wg.Wait()
}
