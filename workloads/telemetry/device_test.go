package telemetry

import (
	"context"
	"runtime"
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
		got := parseCPUInfo(strings.NewReader(c.in), CPU{})
		if got.Model != c.model || got.Physical != c.phys || got.Sockets != c.sockets {
			t.Errorf("%s: %q %d %d; want %q %d %d", c.name, got.Model, got.Physical, got.Sockets, c.model, c.phys, c.sockets)
		}
	}
}

// TestCPUIdentity checks the x86 identification read from /proc/cpuinfo (the first
// processor's vendor_id, cpu family and model, not "model name") and Name's text, on
// a VM's masked model name (AMD Zen 5), an Intel Xeon, and lines without numbers.
func TestCPUIdentity(t *testing.T) {
	zen5 := "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 26\nmodel\t\t: 2\nmodel name\t: AMD EPYC\nstepping\t: 1\n\n" +
		"processor\t: 1\nvendor_id\t: AuthenticAMD\ncpu family\t: 26\nmodel\t\t: 2\nmodel name\t: AMD EPYC\n"
	spr := "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 143\nmodel name\t: Intel(R) Xeon(R) Platinum 8481C CPU @ 2.70GHz\n"
	other := "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 1000\nmodel name\t: Some Xeon\n"
	bad := "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: x\nmodel\t\t: y\nmodel name\t: AMD EPYC\n"
	for _, c := range []struct {
		name, in, vendor string
		family, model    int
		arch, text       string
	}{
		{"Zen 5", zen5, "AuthenticAMD", 26, 2, "Zen 5", "AMD EPYC (AuthenticAMD family 26 model 2: Zen 5)"},
		{"Sapphire Rapids", spr, "GenuineIntel", 6, 143, "Sapphire Rapids", "Intel(R) Xeon(R) Platinum 8481C CPU @ 2.70GHz (GenuineIntel family 6 model 143: Sapphire Rapids)"},
		{"unknown model", other, "GenuineIntel", 6, 1000, "", "Some Xeon (GenuineIntel family 6 model 1000)"},
		{"no numbers", bad, "AuthenticAMD", 0, 0, "", "AMD EPYC"},
	} {
		got := parseCPUInfo(strings.NewReader(c.in), CPU{})
		if got.Vendor != c.vendor || got.Family != c.family || got.ModelNumber != c.model || got.Microarch != c.arch || got.Name() != c.text {
			t.Errorf("%s: %q %d %d %q, Name %q; want %q %d %d %q, %q", c.name, got.Vendor, got.Family, got.ModelNumber, got.Microarch, got.Name(), c.vendor, c.family, c.model, c.arch, c.text)
		}
	}
	for _, c := range []struct {
		vendor        string
		family, model int
		want          string
	}{
		{"AuthenticAMD", 0x19, 0x01, "Zen 3"}, {"AuthenticAMD", 0x19, 0x11, "Zen 4"}, {"AuthenticAMD", 0x19, 0x61, "Zen 4"},
		{"AuthenticAMD", 0x19, 0xA0, "Zen 4"}, {"AuthenticAMD", 0x19, 0x30, ""}, {"AuthenticAMD", 0x1A, 0x11, "Zen 5"},
		{"AuthenticAMD", 0x17, 0x31, ""}, {"GenuineIntel", 6, 0xCF, "Emerald Rapids"}, {"GenuineIntel", 6, 0xAD, "Granite Rapids"},
		{"GenuineIntel", 6, 0x6A, "Ice Lake-SP"}, {"GenuineIntel", 19, 0x01, ""}, {"HygonGenuine", 0x18, 0, ""},
	} {
		if got := Microarch(c.vendor, c.family, c.model); got != c.want {
			t.Errorf("Microarch(%s, %#x, %#x) = %q, want %q", c.vendor, c.family, c.model, got, c.want)
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
	// The buffer's mapping and its huge pages, where the system says (Linux).
	if runtime.GOOS == "linux" {
		if b.HugePageBytes < 0 || b.MappedBytes < b.Bytes || b.HugePageBytes > b.MappedBytes {
			t.Errorf("huge pages %d of a %d-byte mapping for a %d-byte buffer", b.HugePageBytes, b.MappedBytes, b.Bytes)
		}
	} else if b.HugePageBytes != -1 {
		t.Errorf("huge pages %d where they cannot be read, want -1", b.HugePageBytes)
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
