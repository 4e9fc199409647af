package telemetry

import (
	"context"
	"strings"
	"testing"

	"llmbench/kernels/cpu"
	"llmbench/workloads/metrics"
)

func TestParseCPUInfo(t *testing.T) {
	x86 := `processor	: 0
vendor_id	: AuthenticAMD
model name	: AMD EPYC 7B13
physical id	: 0
core id		: 0

processor	: 1
model name	: AMD EPYC 7B13
physical id	: 0
core id		: 0

processor	: 2
model name	: AMD EPYC 7B13
physical id	: 0
core id		: 1

processor	: 3
model name	: AMD EPYC 7B13
physical id	: 1
core id		: 0
`
	arm := "processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd\n\nModel\t: Raspberry Pi 4 Model B Rev 1.4\n"
	cases := []struct {
		name, in, model string
		phys, sockets   int
	}{
		{"x86 with SMT and two sockets", x86, "AMD EPYC 7B13", 3, 2},
		{"arm", arm, "Raspberry Pi 4 Model B Rev 1.4", 0, 0},
		{"empty", "", "", 0, 0},
		{"garbage", "no colons here\n\n\n", "", 0, 0},
	}
	for _, c := range cases {
		m, p, s := parseCPUInfo(strings.NewReader(c.in))
		if m != c.model || p != c.phys || s != c.sockets {
			t.Errorf("%s: %q %d %d; want %q %d %d", c.name, m, p, s, c.model, c.phys, c.sockets)
		}
	}
}

func TestCPUInfo(t *testing.T) {
	c := CPUInfo()
	if c.Model == "" || c.Logical < 1 || c.Arch == "" {
		t.Errorf("CPUInfo() = %+v", c)
	}
}

func TestMeasureReadBandwidth(t *testing.T) {
	b, err := MeasureReadBandwidth(context.Background(), 4<<20, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Samples) != 3 || b.Median <= 0 || b.Threads != 2 || b.Bytes <= 0 || b.Bytes > 4<<20 || b.Bytes%(2*4*cpu.ReadLine) != 0 {
		t.Errorf("bandwidth %+v", b)
	}
	// Every pattern ran, Best names the pattern with the highest median, and the
	// samples and median are that pattern's.
	if len(b.Patterns) != len(cpu.ReadPatterns()) {
		t.Fatalf("patterns %+v, want one each of %v", b.Patterns, cpu.ReadPatterns())
	}
	top := b.Patterns[0]
	for i, p := range b.Patterns {
		if p.Pattern != cpu.ReadPatterns()[i].String() || p.Median <= 0 {
			t.Errorf("pattern %d: %+v", i, p)
		}
		if p.Median > top.Median {
			top = p
		}
		if p.Median > b.Median {
			t.Errorf("pattern %+v above the probe's rate %v", p, b.Median)
		}
	}
	if b.Best != top.Pattern || b.Median != top.Median || metrics.Median(b.Samples) != b.Median {
		t.Errorf("best %q at %v (samples %v), want %q at %v", b.Best, b.Median, b.Samples, top.Pattern, top.Median)
	}
	for _, c := range []struct {
		size           int64
		threads, probe int
		want           string
	}{{1 << 10, 1, 1, "too small"}, {4 << 20, 1, 0, "probes"}} {
		if _, err := MeasureReadBandwidth(context.Background(), c.size, c.threads, c.probe); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v", c, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := MeasureReadBandwidth(ctx, 1<<20, 1, 2); err == nil {
		t.Error("cancelled probe: no error")
	}
}
