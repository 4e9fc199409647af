package engine

import (
	"math"
	"time"
)

// stepBuckets and stepRatio shape StepTimes: bucket b holds durations from
// 1 µs × 1.02^b up to the next bucket (bucket 0 everything shorter), the last one
// everything from about 10 minutes on.
const (
	stepBuckets = 1024
	stepRatio   = 1.02
)

// StepTimes is a histogram of scheduler step durations in buckets 2 % wide, so that a
// quantile is known to within 1 %, with their count and total. The zero value is
// empty; Sub gives the steps between two readings.
type StepTimes struct {
	N      int64         // steps
	Total  time.Duration // their summed duration
	counts [stepBuckets]int64
}

func stepBucket(d time.Duration) int {
	if d <= time.Microsecond {
		return 0
	}
	b := int(math.Log(float64(d)/float64(time.Microsecond)) / math.Log(stepRatio))
	return min(b, stepBuckets-1)
}

func (h *StepTimes) add(d time.Duration) {
	h.N++
	h.Total += d
	h.counts[stepBucket(d)]++
}

// Sub returns the steps of h that came after the reading before.
func (h StepTimes) Sub(before StepTimes) StepTimes {
	h.N -= before.N
	h.Total -= before.Total
	for i := range h.counts {
		h.counts[i] -= before.counts[i]
	}
	return h
}

// Mean returns the mean step duration (0 with no steps).
func (h StepTimes) Mean() time.Duration {
	if h.N <= 0 {
		return 0
	}
	return h.Total / time.Duration(h.N)
}

// Median returns the median step duration (0 with no steps).
func (h StepTimes) Median() time.Duration { return h.Quantile(0.5) }

// Quantile returns the duration below which a share q (0 to 1) of the steps fall, as
// the geometric middle of the bucket that holds it (0 with no steps).
func (h StepTimes) Quantile(q float64) time.Duration {
	if h.N <= 0 {
		return 0
	}
	rank := int64(math.Ceil(q * float64(h.N)))
	rank = min(max(rank, 1), h.N)
	var seen int64
	for b, c := range h.counts {
		if seen += c; seen >= rank {
			if b == 0 {
				return time.Microsecond
			}
			return time.Duration(float64(time.Microsecond) * math.Pow(stepRatio, float64(b)+0.5))
		}
	}
	return time.Duration(float64(time.Microsecond) * math.Pow(stepRatio, stepBuckets))
}
