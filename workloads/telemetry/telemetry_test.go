package telemetry

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fixture writes files under a temporary root.
func fixture(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, s := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// clock is a settable time source.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestCPUReader(t *testing.T) {
	stat1 := "cpu  100 0 100 800 0 0 0 0 0 0\ncpu0 50 0 50 400 0 0 0 0 0 0\ncpu1 50 0 50 400 0 0 0 0 0 0\nintr 1\n"
	stat2 := "cpu  250 0 150 900 0 0 0 0 0 0\ncpu0 150 0 50 400 0 0 0 0 0 0\ncpu1 100 0 100 500 0 0 0 0 0 0\n"
	const rapl = "sys/class/powercap/intel-rapl:0/"
	root := fixture(t, map[string]string{
		"proc/stat":       stat1,
		"proc/self/statm": "1000 250 10 1 0 100 0\n",
		"sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq": "2400000\n",
		"sys/devices/system/cpu/cpu1/cpufreq/scaling_cur_freq": "3000000\n",
		rapl + "energy_uj":                            "999000000\n",
		rapl + "max_energy_range_uj":                  "1000000000\n",
		rapl + "name":                                 "package-0",
		"sys/class/powercap/intel-rapl:0:0/energy_uj": "5\n", // a sub-zone: not counted
	})
	c := &clock{time.Unix(100, 0)}
	r := newCPUReader(root, c.now)
	u := r.Read()
	if len(u.Util) != 0 || !u.HasEnergy || u.EnergyJ != 0 || u.RSS != 250*int64(os.Getpagesize()) {
		t.Fatalf("first reading %+v", u)
	}
	if len(u.MHz) != 2 || u.MHz[0] != 2400 || u.MeanMHz() != 2700 {
		t.Errorf("MHz %v", u.MHz)
	}
	// Next second: 2 J more, with the counter wrapping past its range.
	os.WriteFile(filepath.Join(root, "proc/stat"), []byte(stat2), 0o644)
	os.WriteFile(filepath.Join(root, rapl+"energy_uj"), []byte("1000000\n"), 0o644)
	c.t = c.t.Add(time.Second)
	u = r.Read()
	if len(u.Util) != 2 || u.Util[0] != 100 || u.Util[1] != 50 || u.UtilAll < 66.6 || u.UtilAll > 66.7 {
		t.Errorf("util %v all %v", u.Util, u.UtilAll)
	}
	if d := u.EnergyJ - 2.000000; d > 1e-6 || d < -1e-6 || u.PowerW < 1.99 || u.PowerW > 2.01 {
		t.Errorf("energy %v J power %v W; want 2 J, 2 W across the wrap", u.EnergyJ, u.PowerW)
	}
}

// TestCPUReaderKeepsFiles: the reader keeps its files open and reads them afresh each
// time; a file that goes away is opened again when it comes back; a core going
// offline leaves that reading without utilisation rather than pair the wrong cores;
// and a reading allocates only the slices it returns.
func TestCPUReaderKeepsFiles(t *testing.T) {
	stat := func(c0, c1 string) string {
		return "cpu  200 0 0 800 0 0 0 0 0 0\ncpu0 " + c0 + "\n" + c1 + "intr 5 1 2\n"
	}
	root := fixture(t, map[string]string{
		"proc/stat":       stat("100 0 0 400 0", "cpu1 100 0 0 400 0\n"),
		"proc/self/statm": "1000 250 10 1 0 100 0\n",
		"proc/cpuinfo":    "processor: 0\ncpu MHz\t\t: 2596.118\n",
	})
	r := newCPUReader(root, time.Now)
	defer r.Close()
	write := func(p, s string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(root, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r.Read()
	write("proc/stat", stat("150 0 0 450 0", "cpu1 100 0 0 500 0\n"))
	if u := r.Read(); len(u.Util) != 2 || u.Util[0] != 50 || u.Util[1] != 0 {
		t.Errorf("util %v; want [50 0]", u.Util)
	}
	write("proc/stat", stat("200 0 0 500 0", "")) // cpu1 went offline
	if u := r.Read(); len(u.Util) != 0 {
		t.Errorf("util %v across a change of cores; want none", u.Util)
	}
	if err := os.Remove(filepath.Join(root, "proc/self/statm")); err != nil {
		t.Fatal(err)
	}
	if u := r.Read(); u.RSS != 250*int64(os.Getpagesize()) { // the kept descriptor still reads it
		t.Errorf("RSS %d after unlink", u.RSS)
	}
	r.statm.close()
	if u := r.Read(); u.RSS != 0 {
		t.Errorf("RSS %d with statm gone", u.RSS)
	}
	write("proc/self/statm", "1000 300 10 1 0 100 0\n")
	if u := r.Read(); u.RSS != 300*int64(os.Getpagesize()) || len(u.MHz) != 1 || u.MHz[0] != 2596.118 {
		t.Errorf("RSS %d MHz %v once statm is back", u.RSS, u.MHz)
	}
	if n := testing.AllocsPerRun(20, func() { r.Read() }); n > 2 {
		t.Errorf("a reading allocates %v times; want only its utilisation and MHz slices", n)
	}
}

// TestProcFileRead: a file longer than the first buffer comes back whole, each read
// sees the content as it is then, and a descriptor that cannot be read is an error.
func TestProcFileRead(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("0123456789abcdef", 700) // 11,200 bytes: the buffer doubles twice
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path, []byte(long), 0o644); err != nil {
		t.Fatal(err)
	}
	p := procFile{path: path}
	defer p.close()
	if b, err := p.read(); err != nil || string(b) != long {
		t.Fatalf("read %d bytes, %v; want the %d written", len(b), err, len(long))
	}
	if err := os.WriteFile(path, []byte("short\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := p.read(); err != nil || string(b) != "short\n" {
		t.Fatalf("read %q, %v after the rewrite", b, err)
	}
	d := procFile{path: dir}
	defer d.close()
	if b, err := d.read(); err == nil {
		t.Errorf("reading a directory gave %q and no error", b)
	}
}

// TestParseStatLines: fields past the eighth (guest time) are not counted, a line
// with fewer than four numbers or a non-number is skipped.
func TestParseStatLines(t *testing.T) {
	cores, all, ok := parseStat([]byte("cpu 1 2 3 4 5 6 7 8 9 10\ncpu3 1 2 3\ncpu4 1 x 3 4\ncpu7 10 0 0 30\ncpuX 1 1 1 1\nctxt 9"), nil)
	if !ok || all != (cpuTimes{core: -1, busy: 1 + 2 + 3 + 6 + 7 + 8, total: 36}) {
		t.Errorf("all %+v found %v", all, ok)
	}
	if len(cores) != 1 || cores[0] != (cpuTimes{core: 7, busy: 10, total: 40}) {
		t.Errorf("cores %+v; want cpu7 alone", cores)
	}
}

func TestCPUReaderFallbacks(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		mhz   int
		note  string
	}{
		{"cpuinfo MHz, no powercap", map[string]string{"proc/cpuinfo": "processor: 0\ncpu MHz\t\t: 2596.118\n\nprocessor: 1\ncpu MHz : 2000\n"}, 2, "no powercap"},
		{"unreadable RAPL", map[string]string{"sys/class/powercap/intel-rapl:0/name": "package-0"}, 0, "not readable"},
		{"nothing at all", map[string]string{}, 0, "RAPL"},
		{"garbage stat", map[string]string{"proc/stat": "cpu x y z w v\ncpuX 1 2 3 4\n", "proc/self/statm": "1"}, 0, "RAPL"},
	}
	for _, c := range cases {
		r := newCPUReader(fixture(t, c.files), time.Now)
		u := r.Read()
		u = r.Read()
		if len(u.MHz) != c.mhz || u.HasEnergy || !strings.Contains(u.Note, c.note) || u.RSS != 0 {
			t.Errorf("%s: %+v", c.name, u)
		}
	}
}

func TestRAPLDelta(t *testing.T) {
	for _, c := range []struct{ prev, cur, max, want uint64 }{
		{10, 20, 100, 10}, {90, 5, 99, 14}, {0, 0, 100, 0}, {99, 1, 100, 2},
	} {
		if got := raplDelta(c.prev, c.cur, c.max); got != c.want {
			t.Errorf("raplDelta(%d, %d, %d) = %d; want %d", c.prev, c.cur, c.max, got, c.want)
		}
	}
}

func TestThrottleReasons(t *testing.T) {
	if got := strings.Join(ThrottleReasons(ThrottleSWPowerCap|ThrottleHWThermal|0x10000), ","); got != "sw_power_cap,hw_thermal,0x10000" {
		t.Errorf("got %s", got)
	}
	if got := ThrottleReasons(0); len(got) != 0 {
		t.Errorf("no reasons: %v", got)
	}
}

func TestFakeRespondsToTheLimit(t *testing.T) {
	c := &clock{time.Unix(1000, 0)}
	f, err := NewFake(FakeOptions{GPUs: 2, Now: c.now, Load: func() float64 { return 1 }})
	if err != nil {
		t.Fatal(err)
	}
	read := func(i int) GPU {
		g, err := f.Read(i)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	c.t = c.t.Add(time.Second)
	hi := read(0)
	if hi.PowerW < 550 || hi.PowerW > 700 || hi.PowerLimitW != 700 || hi.SMClockMHz != 1980 || len(hi.ThrottleNames) != 0 || !hi.HasEnergy || hi.PState != 0 {
		t.Fatalf("at 700 W: %+v", hi)
	}
	if err := f.SetPowerLimit(0, 300); err != nil {
		t.Fatal(err)
	}
	c.t = c.t.Add(time.Second)
	lo, other := read(0), read(1)
	if lo.PowerW > 300 || lo.PowerW < 280 || lo.SMClockMHz >= hi.SMClockMHz || lo.TempC >= hi.TempC || lo.ThrottleNames[0] != "sw_power_cap" {
		t.Errorf("at 300 W: %+v (was %+v)", lo, hi)
	}
	if other.PowerLimitW != 700 || other.PowerW < 550 {
		t.Errorf("GPU 1 follows GPU 0's limit: %+v", other)
	}
	if lo.EnergyJ <= hi.EnergyJ {
		t.Errorf("energy counter did not grow: %v then %v", hi.EnergyJ, lo.EnergyJ)
	}
	for _, bad := range []struct {
		i int
		w float64
	}{{0, 100}, {0, 800}, {2, 500}, {-1, 500}} {
		if err := f.SetPowerLimit(bad.i, bad.w); err == nil {
			t.Errorf("SetPowerLimit(%d, %v): no error", bad.i, bad.w)
		}
	}
	if _, err := f.Read(5); err == nil {
		t.Error("Read(5): no error")
	}
	f.Close()
	if _, err := f.PowerLimit(0); err == nil {
		t.Error("closed: no error")
	}
}

func TestFakeStatePersists(t *testing.T) {
	file := filepath.Join(t.TempDir(), "fake.json")
	f, _ := NewFake(FakeOptions{StateFile: file})
	if err := f.SetPowerLimit(0, 450); err != nil {
		t.Fatal(err)
	}
	g, err := NewFake(FakeOptions{StateFile: file})
	if err != nil {
		t.Fatal(err)
	}
	if w, _ := g.PowerLimit(0); w != 450 {
		t.Errorf("limit in a new process: %v; want 450", w)
	}
	os.WriteFile(file, []byte("{"), 0o644)
	if _, err := NewFake(FakeOptions{StateFile: file}); err == nil {
		t.Error("damaged state: no error")
	}
	d, _ := NewFake(FakeOptions{DenySet: true})
	if err := d.SetPowerLimit(0, 400); !errors.Is(err, ErrPermission) {
		t.Errorf("DenySet: %v", err)
	}
}

func TestOpen(t *testing.T) {
	cases := []struct {
		kind, note string
		gpus, err  bool
	}{
		{"fake", "fake device", true, false},
		{"none", "off", false, false},
		{"auto", "NVML", false, false}, // no NVIDIA driver on the test machines
		{"tpu", "", false, true},
	}
	for _, c := range cases {
		g, note, err := Open(c.kind, "")
		if (err != nil) != c.err || (g != nil) != c.gpus || !strings.Contains(note, c.note) {
			if c.kind == "auto" && g != nil {
				t.Logf("auto found a GPU: %s", note)
				g.Close()
				continue
			}
			t.Errorf("Open(%q) = %v, %q, %v", c.kind, g, note, err)
		}
	}
}

func TestSamplerAndSummarize(t *testing.T) {
	c := &clock{time.Unix(0, 0)}
	f, _ := NewFake(FakeOptions{Now: c.now, Load: func() float64 { return 1 }})
	s := NewSampler(f, "fake")
	var rs []Reading
	for i := range 11 {
		rs = append(rs, s.Read(time.Duration(i)*100*time.Millisecond))
		c.t = c.t.Add(100 * time.Millisecond)
	}
	p := Summarize(rs, "gpu:0")
	if p.Source != SourceFake || p.Device != "gpu:0" || p.GPUSource != SourceFake || p.Samples != 11 || p.Seconds != 1 || !p.Known() || p.LimitW != 700 {
		t.Fatalf("summary %+v", p)
	}
	if p.MinW > p.MeanW || p.MeanW > p.MaxW+1 || p.EnergyJ < 500 || p.EnergyJ > 700 || p.SMClockMHz != 1980 || p.TempMaxC < 60 {
		t.Errorf("summary %+v", p)
	}
	if !strings.Contains(p.String(), "GPU 0, FAKE readings") || !p.Fake() {
		t.Errorf("String() = %q", p.String())
	}
	// Without energy counters the power readings are integrated.
	for i := range rs {
		rs[i].GPUs[0].HasEnergy = false
	}
	if q := Summarize(rs, "gpu"); q.EnergyJ < 0.95*p.EnergyJ || q.EnergyJ > 1.05*p.EnergyJ {
		t.Errorf("integrated %v J vs counters %v J", q.EnergyJ, p.EnergyJ)
	}
	cpu := []Reading{
		{At: 0, CPU: CPUUsage{HasEnergy: true, EnergyJ: 10, PowerW: 99}},
		{At: time.Second, CPU: CPUUsage{HasEnergy: true, EnergyJ: 40, PowerW: 30}},
		{At: 2 * time.Second, CPU: CPUUsage{HasEnergy: true, EnergyJ: 50, PowerW: 10}},
	}
	if q := Summarize(cpu, "cpu"); q.Source != SourceRAPL || q.Device != "cpu" || q.EnergyJ != 40 || q.MeanW != 20 || q.MinW != 10 || q.MaxW != 30 {
		t.Errorf("cpu summary %+v", q)
	}
	for name, rs := range map[string][]Reading{"none": nil, "no energy": {{At: 0}, {At: time.Second}}} {
		if q := Summarize(rs, "cpu"); q.Known() || q.Source != "" || !strings.HasPrefix(q.String(), "power: not measured") {
			t.Errorf("%s: %+v", name, q)
		}
	}
}

// TestSummarizeCountsOnlyTheEnergyDevice: a GPU sampled beside the CPU engine never
// lends it its joules; the CPU without RAPL gives no number and says why; a GPU is
// counted only when named, and only the one named.
func TestSummarizeCountsOnlyTheEnergyDevice(t *testing.T) {
	gpu := func(i int, w, e float64) GPU { return GPU{Index: i, PowerW: w, EnergyJ: e, HasEnergy: true, TempC: 60} }
	noRAPL := CPUUsage{Note: "RAPL: no powercap zones"}
	rapl := func(e float64) CPUUsage { return CPUUsage{HasEnergy: true, EnergyJ: e, PowerW: 20} }
	rs := []Reading{
		{At: 0, GPUKind: "fake", GPUs: []GPU{gpu(0, 600, 1000), gpu(1, 100, 50)}, CPU: noRAPL},
		{At: time.Second, GPUKind: "fake", GPUs: []GPU{gpu(0, 600, 1600), gpu(1, 100, 150)}, CPU: noRAPL},
	}
	withRAPL := []Reading{rs[0], rs[1]}
	withRAPL[0].CPU, withRAPL[1].CPU = rapl(5), rapl(25)
	cases := []struct {
		name   string
		rs     []Reading
		dev    string
		energy float64 // 0: not measured
		source string
		note   string
	}{
		{"cpu, no RAPL, fake GPU beside", rs, "cpu", 0, "", "RAPL: no powercap zones"},
		{"cpu with RAPL, fake GPU beside", withRAPL, "cpu", 20, SourceRAPL, ""},
		{"gpu:0", rs, "gpu:0", 600, SourceFake, ""},
		{"gpu:1", rs, "gpu:1", 100, SourceFake, ""},
		{"every gpu", rs, "gpu", 700, SourceFake, ""},
		{"gpu:2 absent", rs, "gpu:2", 0, "", "GPU 2: not among the 2 GPU(s) sampled"},
		{"none", rs, "none", 0, "", "energy device: none"},
		{"unnamed", rs, "", 0, "", "no energy device named"},
	}
	for _, c := range cases {
		p := Summarize(c.rs, c.dev)
		if p.EnergyJ != c.energy || p.Known() != (c.energy > 0) || p.Source != c.source || !strings.HasPrefix(p.Note, c.note) || p.GPUSource != SourceFake || !p.Fake() {
			t.Errorf("%s: %+v", c.name, p)
		}
		if c.dev == "cpu" && (p.TempMaxC != 0 || p.LimitW != 0) {
			t.Errorf("%s: GPU figures in a CPU summary: %+v", c.name, p)
		}
	}
	if d := Summarize(rs, "cpu").Describe(); d != "not measured: CPU package (RAPL: no powercap zones)" {
		t.Errorf("Describe = %q", d)
	}
	if d := Summarize(withRAPL, "cpu").Describe(); d != "CPU package, real readings (RAPL)" {
		t.Errorf("Describe = %q", d)
	}
	// A result saved before energy devices kept the device in Source.
	old := Power{Source: "gpu", Seconds: 1, EnergyJ: 5}
	if old.EnergyDevice() != "gpu" || old.Provenance() != "" || !old.Known() {
		t.Errorf("legacy %+v", old)
	}
}

func TestParseEnergyDevice(t *testing.T) {
	for in, want := range map[string]string{"": "", "cpu": "cpu", "GPU": "gpu", " gpu:0 ": "gpu:0", "gpu:07": "gpu:7", "none": "none"} {
		if got, err := ParseEnergyDevice(in); err != nil || got != want {
			t.Errorf("%q: %q %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"tpu", "gpu:", "gpu:-1", "gpu:x", "cpu:0"} {
		if _, err := ParseEnergyDevice(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestFakeFollowsTheLoad: the fake draws what the run's load asks (idle at no load,
// busy at full load, capped by the limit), not a curve over time.
func TestFakeFollowsTheLoad(t *testing.T) {
	c := &clock{time.Unix(0, 0)}
	load := 0.0
	f, _ := NewFake(FakeOptions{Now: c.now, Load: func() float64 { return load }})
	at := func(l float64) GPU {
		load = l
		c.t = c.t.Add(time.Second)
		g, _ := f.Read(0)
		return g
	}
	idle, busy, half := at(0), at(1), at(0.5)
	if idle.PowerW < 65 || idle.PowerW > 75 || idle.UtilGPU != 0 || len(idle.ThrottleNames) != 0 {
		t.Errorf("idle: %+v", idle)
	}
	if busy.PowerW < 640 || busy.PowerW > 680 || busy.UtilGPU != 99 {
		t.Errorf("busy: %+v", busy)
	}
	if half.PowerW < 340 || half.PowerW > 390 {
		t.Errorf("half: %+v", half)
	}
	f.SetPowerLimit(0, 300)
	if capped := at(1); capped.PowerW > 300 || capped.ThrottleNames[0] != "sw_power_cap" {
		t.Errorf("capped: %+v", capped)
	}
	if again := at(0); again.PowerW > 75 || len(again.ThrottleNames) != 0 {
		t.Errorf("idle under the cap: %+v", again)
	}
	// The default load is this process's CPU utilisation: a busy loop raises it.
	pl := newProcessLoad(time.Now)
	deadline := time.Now().Add(120 * time.Millisecond)
	for x := 0; time.Now().Before(deadline); x++ {
	}
	if v := pl.read(); v <= 0 || v > 1 {
		t.Errorf("process load after a busy loop: %v", v)
	}
}

// TestFakeSharesItsState: a second Fake on the same state file sees the limit the
// first one sets, as a second process sees a driver's.
func TestFakeSharesItsState(t *testing.T) {
	file := filepath.Join(t.TempDir(), "fake.json")
	a, _ := NewFake(FakeOptions{StateFile: file})
	b, _ := NewFake(FakeOptions{StateFile: file})
	a.SetPowerLimit(0, 450)
	if w, _ := b.PowerLimit(0); w != 450 {
		t.Errorf("b sees %v W; want 450", w)
	}
	if g, _ := b.Read(0); g.PowerLimitW != 450 {
		t.Errorf("b reads %+v", g)
	}
}

// setLog wraps GPUs and records every set, failing the ones listed.
type setLog struct {
	GPUs
	sets []string
	fail map[float64]error
}

func (s *setLog) SetPowerLimit(i int, w float64) error {
	if err := s.fail[w]; err != nil {
		return err
	}
	s.sets = append(s.sets, fmt.Sprintf("%d:%g", i, w))
	return s.GPUs.SetPowerLimit(i, w)
}

// stateFiles lists the power state files beside file (the legacy one and each
// GPU's).
func stateFiles(file string) []string {
	m, _ := filepath.Glob(strings.TrimSuffix(file, ".json") + "*.json")
	return m
}

func TestPowerGuard(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, PowerStateFile)
	f, _ := NewFake(FakeOptions{GPUs: 2})
	f.SetPowerLimit(1, 650)
	g := &setLog{GPUs: f}
	p := NewPowerGuard(g, file)
	if err := p.Set(0, 500); err != nil {
		t.Fatal(err)
	}
	if got := stateFiles(file); len(got) != 1 || filepath.Base(got[0]) != "power-limits-fake-GPU-fake-0000-0000.json" {
		t.Fatalf("state files after the first change: %v", got)
	}
	p.Set(1, 400)
	p.Set(0, 300)
	if w, ok := p.Original(1); !ok || w != 650 || !p.Changed() {
		t.Errorf("Original(1) = %v, %v", w, ok)
	}
	if err := p.Restore(); err != nil {
		t.Fatal(err)
	}
	// Restored in reverse order of the first changes: GPU 1, then GPU 0.
	if got := strings.Join(g.sets, " "); got != "0:500 1:400 0:300 1:650 0:700" {
		t.Errorf("set/restore order %q", got)
	}
	if left := stateFiles(file); len(left) > 0 || p.Changed() {
		t.Errorf("state files left after Restore: %v", left)
	}
	if err := p.Restore(); err != nil || len(g.sets) != 5 {
		t.Errorf("second Restore: %v, sets %v", err, g.sets)
	}

	// Permission denied on the first change: nothing changed, no state file left,
	// the lock released (a next guard may change the GPU).
	d, _ := NewFake(FakeOptions{DenySet: true})
	pd := NewPowerGuard(d, file)
	if err := pd.Set(0, 500); !errors.Is(err, ErrPermission) {
		t.Errorf("denied: %v", err)
	}
	if left := stateFiles(file); len(left) > 0 {
		t.Errorf("state file left after a refused change: %v", left)
	}
	if _, ok := pd.Original(0); ok {
		t.Error("refused change counted as a change")
	}
	if err := NewPowerGuard(f, file).Set(0, 600); err != nil {
		t.Errorf("after a refused change the GPU stays locked: %v", err)
	}
	f.SetPowerLimit(0, 700)
	os.Remove(stateFiles(file)[0])
	// Unwritable state dir: refuse to change anything.
	blocker := filepath.Join(dir, "blocker")
	os.WriteFile(blocker, nil, 0o644)
	pb := NewPowerGuard(f, filepath.Join(blocker, "state.json"))
	if err := pb.Set(0, 500); err == nil || !strings.Contains(err.Error(), "saving the original") {
		t.Errorf("unwritable state: %v", err)
	}
	if w, _ := f.PowerLimit(0); w != 700 {
		t.Errorf("limit changed without a saved original: %v", w)
	}
	// A failing restore keeps the state file for the next start.
	dir2 := t.TempDir()
	file2 := filepath.Join(dir2, PowerStateFile)
	h := &setLog{GPUs: f, fail: map[float64]error{700: errors.New("boom")}}
	ph := NewPowerGuard(h, file2)
	ph.Set(0, 350)
	if err := ph.Restore(); err == nil {
		t.Error("failed restore: no error")
	}
	if left := stateFiles(file2); len(left) != 1 {
		t.Errorf("state file gone after a failed restore: %v", left)
	}
}

// TestPowerGuardLock: while one guard holds a GPU, another (as another process
// would) is refused with the holder's pid and changes nothing; once the first has
// restored, the second may go. A state file left by a dead holder gives the true
// original, not the limit it left behind.
func TestPowerGuardLock(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, PowerStateFile)
	shared := filepath.Join(dir, FakeStateFile)
	a, _ := NewFake(FakeOptions{StateFile: shared})
	b, _ := NewFake(FakeOptions{StateFile: shared})
	ga, gb := NewPowerGuard(a, file), NewPowerGuard(b, file)
	if err := ga.Set(0, 300); err != nil {
		t.Fatal(err)
	}
	err := gb.Set(0, 400)
	var le *LockedError
	if !errors.Is(err, ErrLocked) || !errors.As(err, &le) || le.PID != os.Getpid() || !strings.Contains(err.Error(), fmt.Sprintf("llmbench pid %d is changing it", os.Getpid())) {
		t.Fatalf("second guard: %v", err)
	}
	if w, _ := b.PowerLimit(0); w != 300 || gb.Changed() {
		t.Errorf("the refused guard changed the limit: %v W", w)
	}
	// RestoreSaved leaves a GPU whose holder runs alone, without a word.
	if lines, err := RestoreSaved(b, file); err != nil || len(lines) != 0 {
		t.Errorf("RestoreSaved while held: %v %v", lines, err)
	}
	if err := gb.Restore(); err != nil {
		t.Errorf("Restore of nothing: %v", err)
	}
	if err := ga.Restore(); err != nil {
		t.Fatal(err)
	}
	if w, _ := b.PowerLimit(0); w != 700 {
		t.Errorf("after the holder's restore: %v W", w)
	}
	if err := gb.Set(0, 400); err != nil {
		t.Fatalf("after the holder let go: %v", err)
	}
	// The holder dies: its state file stays; a next guard restores the original.
	gb.crash()
	gc := NewPowerGuard(a, file)
	if err := gc.Set(0, 500); err != nil {
		t.Fatal(err)
	}
	if w, ok := gc.Original(0); !ok || w != 700 {
		t.Errorf("original after a dead holder: %v, %v; want 700", w, ok)
	}
	gc.Restore()
	if w, _ := a.PowerLimit(0); w != 700 {
		t.Errorf("restored to %v W", w)
	}
	// A dead holder's file, restored at the next start.
	gd := NewPowerGuard(a, file)
	gd.Set(0, 450)
	gd.crash()
	lines, err := RestoreSaved(b, file)
	if err != nil || len(lines) != 1 || !strings.Contains(lines[0], "to 700 W (left at 450 W") {
		t.Errorf("RestoreSaved: %v %v", lines, err)
	}
	if left := stateFiles(file); len(left) > 0 {
		t.Errorf("state files left: %v", left)
	}
}

func TestRestoreSaved(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, PowerStateFile)
	f, _ := NewFake(FakeOptions{})
	// A process that died mid-sweep: its state file names a pid that is gone.
	os.WriteFile(file, []byte(`{"pid": 2147483646, "kind": "fake", "limits": [{"index": 0, "uuid": "GPU-fake-0000-0000", "limit_w": 700}]}`), 0o644)
	f.SetPowerLimit(0, 400)
	lines, err := RestoreSaved(f, file)
	if err != nil || len(lines) != 1 || !strings.Contains(lines[0], "700 W") {
		t.Fatalf("RestoreSaved: %v %v", lines, err)
	}
	if w, _ := f.PowerLimit(0); w != 700 {
		t.Errorf("limit %v; want 700", w)
	}
	if _, err := os.Stat(file); !errors.Is(err, os.ErrNotExist) {
		t.Error("state file left")
	}
	cases := []struct {
		name, content string
		gpus          GPUs
		want          string
		keep          bool
	}{
		{"no file", "", f, "", false},
		{"damaged", "{", f, "damaged", false},
		{"owner alive", `{"pid": ` + strconv.Itoa(os.Getppid()) + `, "kind": "fake", "limits": []}`, f, "still runs", true},
		{"other kind", `{"pid": 2147483646, "kind": "nvml", "limits": []}`, f, "nvml GPUs", true},
		{"no gpus", `{"pid": 2147483646, "kind": "fake", "limits": []}`, nil, "fake GPUs", true},
	}
	for _, c := range cases {
		os.Remove(file)
		if c.content != "" {
			os.WriteFile(file, []byte(c.content), 0o644)
		}
		_, err := RestoreSaved(c.gpus, file)
		if (c.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", c.name, err)
		}
		if _, serr := os.Stat(file); (serr == nil) != c.keep {
			t.Errorf("%s: state file kept = %v", c.name, serr == nil)
		}
	}
}

func TestStateDir(t *testing.T) {
	t.Setenv("LLMBENCH_STATE_DIR", "/tmp/x")
	if d, _ := StateDir(); d != "/tmp/x" {
		t.Errorf("StateDir = %s", d)
	}
	t.Setenv("LLMBENCH_STATE_DIR", "")
	t.Setenv("XDG_STATE_HOME", "/tmp/y")
	if d, _ := StateDir(); d != "/tmp/y/llmbench" {
		t.Errorf("StateDir = %s", d)
	}
}

// crash drops the guard's locks without restoring anything, as the kernel does when
// the process is killed.
func (p *PowerGuard) crash() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, g := range p.held {
		g.lock.unlock()
	}
	p.held, p.order = map[int]*guardedGPU{}, nil
}
