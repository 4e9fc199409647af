package telemetry

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"llmbench/kernels/cpu"
	"llmbench/workloads/metrics"
)

// Bandwidth is the result of a memory read-bandwidth probe.
type Bandwidth struct {
	Bytes   int64     `json:"bytes"`   // buffer size read per probe and pattern
	Threads int       `json:"threads"` // goroutines reading it, each a contiguous share
	Samples []float64 `json:"samples"` // bytes per second of each probe in the fastest pattern (Best), in order
	Median  float64   `json:"median"`  // bytes per second, the median of Samples
	// Patterns is each reading pattern's median over the probes, bytes per second, in
	// the order they ran; Best names the one with the highest median.
	Patterns []PatternRate `json:"patterns"`
	Best     string        `json:"best_pattern"`
	// HugePageBytes is how much of the mapping that holds the buffer (MappedBytes: the
	// buffer rounded up to whole huge pages, or more where the kernel merged it with a
	// neighbour) the system kept in transparent huge pages once the buffer was written,
	// -1 where that cannot be read; HugePages is the system's setting ("always",
	// "madvise", "never"; "" where there is none). The weights are streamed from memory
	// that asks for huge pages as this buffer does, and the same bytes read slower from
	// 4 KiB pages, so a ceiling is only comparable between machines that give them alike.
	HugePageBytes int64  `json:"huge_page_bytes"`
	MappedBytes   int64  `json:"mapped_bytes,omitempty"`
	HugePages     string `json:"huge_pages,omitempty"`
}

// PatternRate is one reading pattern's median rate over a probe's rounds.
type PatternRate struct {
	Pattern string  `json:"pattern"` // cpu.ReadPattern's name: "1 stream", "4 streams + prefetch"
	Median  float64 `json:"median"`  // bytes per second
}

// GBps returns the median in gigabytes (10⁹ bytes) per second.
func (b Bandwidth) GBps() float64 { return b.Median / 1e9 }

// MeasureReadBandwidth measures how fast threads goroutines can read a buffer of size
// bytes. Each probe reads the whole buffer once in every pattern of cpu.ReadPatterns
// (one or four streams per thread, with and without software prefetch), every thread
// its own contiguous share, at bytes ÷ seconds: which pattern a CPU reads fastest with
// differs (one stream per core leaves most of an Intel Xeon's bandwidth unused, and the
// engine's decode kernels read several streams there), and a ceiling below what the
// kernels reach would be a wrong number. The result is the pattern with the highest
// median over the probes, its samples and median (taking each probe's fastest pattern
// instead would pick the luckiest of four noisy readings). The buffer is written once
// first (untimed) so every page is resident. The median of probes is reported because
// memory bandwidth varies from run to run. threads ≤ 0 means all cores.
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
	const unit = 4 * cpu.ReadLine // every share whole lines of four streams
	words := int(size / 8)
	words -= words % (unit / 8 * threads)
	// The buffer is memory of the kind the engine streams its weights from (huge pages
	// where the system gives them): on a 2-core AMD EPYC (Zen 5) a probe on the Go
	// heap's 4 KiB pages read 64.5 GB/s where the same probe on huge pages read 70–73,
	// and a ceiling below what the kernels can reach would flatter them.
	raw := cpu.AllocStreamed(8 * words)
	defer cpu.FreeStreamed(raw)
	buf := unsafe.Slice((*uint64)(unsafe.Pointer(&raw[0])), words)
	parallel(threads, words, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			buf[i] = uint64(i) * 0x9E3779B97F4A7C15
		}
	})
	pats := cpu.ReadPatterns()
	b := Bandwidth{Bytes: int64(len(raw)), Threads: threads, HugePageBytes: -1, HugePages: cpu.HugePageMode()}
	if huge, mapped, ok := cpu.HugePageBytes(raw); ok {
		b.HugePageBytes, b.MappedBytes = huge, mapped
	}
	rates := make([][]float64, len(pats))
	sums := make([]uint64, threads)
	for range probes {
		for k, p := range pats {
			if err := ctx.Err(); err != nil {
				return b, err
			}
			t0 := time.Now()
			parallelIndexed(threads, len(raw), func(t, lo, hi int) { sums[t] += cpu.ReadSum(raw[lo:hi], p) })
			el := time.Since(t0)
			if el <= 0 {
				return b, errors.New("bandwidth: clock did not advance")
			}
			rates[k] = append(rates[k], float64(b.Bytes)/el.Seconds())
		}
	}
	runtime.KeepAlive(sums)
	for k, p := range pats {
		m := metrics.Median(rates[k])
		b.Patterns = append(b.Patterns, PatternRate{Pattern: p.String(), Median: m})
		if m > b.Median {
			b.Median, b.Best, b.Samples = m, p.String(), rates[k]
		}
	}
	return b, nil
}

func parallel(threads, n int, f func(lo, hi int)) {
	parallelIndexed(threads, n, func(_, lo, hi int) { f(lo, hi) })
}

// parallelIndexed runs f on threads contiguous shares of [0, n); n is a multiple of
// threads·share unit (MeasureReadBandwidth rounds it), so the shares are equal.
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
