package cpu

import (
	"slices"
	"testing"
	"time"

	"llmbench/kernels"
)

// TestCrossoverFrom checks the crossover fit on made-up points.
func TestCrossoverFrom(t *testing.T) {
	pt := func(ctx int, one, part time.Duration) kernels.CrossoverPoint {
		return kernels.CrossoverPoint{Ctx: ctx, OnePass: one, Partitioned: part}
	}
	for _, c := range []struct {
		pts  []kernels.CrossoverPoint
		want int
	}{
		{nil, 0},
		{[]kernels.CrossoverPoint{pt(128, 1, 2), pt(256, 2, 3)}, 0},
		{[]kernels.CrossoverPoint{pt(128, 1, 2), pt(256, 3, 2), pt(512, 5, 4)}, 256},
		// From 128 loses 50 % at 256; from 512 loses 100 % at 128 and 50 % at 256.
		{[]kernels.CrossoverPoint{pt(128, 2, 1), pt(256, 2, 3), pt(512, 5, 4)}, 128},
		{[]kernels.CrossoverPoint{pt(128, 2, 1), pt(256, 3, 2)}, 128},
		// One noisy point among many does not move the crossover.
		{[]kernels.CrossoverPoint{pt(128, 10, 20), pt(256, 10, 20), pt(512, 10, 9), pt(1024, 10, 9), pt(2048, 10, 11), pt(4096, 10, 5)}, 512},
		{[]kernels.CrossoverPoint{pt(128, 10, 11), pt(256, 10, 11), pt(512, 10, 12), pt(1024, 20, 19), pt(2048, 10, 11)}, 0}, // 5 % won at 1024, 10 % lost at 2048
		{[]kernels.CrossoverPoint{pt(128, 10, 10), pt(256, 10, 10)}, 0},                                                      // a tie: no partitions
	} {
		if got := crossoverFrom(c.pts); got != c.want {
			t.Errorf("crossoverFrom(%v) = %d, want %d", c.pts, got, c.want)
		}
	}
	if got, want := crossoverLengths(1000), []int{128, 256, 512, 1000}; !slices.Equal(got, want) {
		t.Errorf("crossoverLengths(1000) = %v, want %v", got, want)
	}
	if got, want := crossoverLengths(512), []int{128, 256, 512}; !slices.Equal(got, want) {
		t.Errorf("crossoverLengths(512) = %v, want %v", got, want)
	}
}

// TestMeasureCrossover runs a small calibration: one point per length, each timed,
// and From consistent with the points.
func TestMeasureCrossover(t *testing.T) {
	c := New(2)
	defer c.Close()
	a := &kernels.Attention{Heads: 4, KVHeads: 2, HeadDim: 32, K: kernels.KVView{Type: kernels.Q8_0}}
	x := c.MeasureCrossover(a, 64, 300)
	if len(x.Points) != 3 || x.Points[2].Ctx != 300 {
		t.Fatalf("points %+v, want contexts 128, 256, 300", x.Points)
	}
	for _, p := range x.Points {
		if p.OnePass <= 0 || p.Partitioned <= 0 {
			t.Errorf("point %+v not timed", p)
		}
	}
	if x.From != crossoverFrom(x.Points) {
		t.Errorf("From %d, points say %d", x.From, crossoverFrom(x.Points))
	}
}
