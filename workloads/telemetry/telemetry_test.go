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
	f, err := NewFake(FakeOptions{GPUs: 2, Now: c.now})
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
	f, _ := NewFake(FakeOptions{Now: c.now})
	s := NewSampler(f, "fake")
	var rs []Reading
	for i := range 11 {
		rs = append(rs, s.Read(time.Duration(i)*100*time.Millisecond))
		c.t = c.t.Add(100 * time.Millisecond)
	}
	p := Summarize(rs)
	if p.Source != "gpu" || p.Samples != 11 || p.Seconds != 1 || !p.Known() || p.LimitW != 700 {
		t.Fatalf("summary %+v", p)
	}
	if p.MinW > p.MeanW || p.MeanW > p.MaxW+1 || p.EnergyJ < 500 || p.EnergyJ > 700 || p.SMClockMHz != 1980 || p.TempMaxC < 60 {
		t.Errorf("summary %+v", p)
	}
	if !strings.Contains(p.String(), "gpu power") {
		t.Errorf("String() = %q", p.String())
	}
	// Without energy counters the power readings are integrated.
	for i := range rs {
		rs[i].GPUs[0].HasEnergy = false
	}
	if q := Summarize(rs); q.EnergyJ < 0.95*p.EnergyJ || q.EnergyJ > 1.05*p.EnergyJ {
		t.Errorf("integrated %v J vs counters %v J", q.EnergyJ, p.EnergyJ)
	}
	cpu := []Reading{
		{At: 0, CPU: CPUUsage{HasEnergy: true, EnergyJ: 10, PowerW: 99}},
		{At: time.Second, CPU: CPUUsage{HasEnergy: true, EnergyJ: 40, PowerW: 30}},
		{At: 2 * time.Second, CPU: CPUUsage{HasEnergy: true, EnergyJ: 50, PowerW: 10}},
	}
	if q := Summarize(cpu); q.Source != "cpu" || q.EnergyJ != 40 || q.MeanW != 20 || q.MinW != 10 || q.MaxW != 30 {
		t.Errorf("cpu summary %+v", q)
	}
	for name, rs := range map[string][]Reading{"none": nil, "no energy": {{At: 0}, {At: time.Second}}} {
		if q := Summarize(rs); q.Known() || q.Source != "" || q.String() != "power: not measured" {
			t.Errorf("%s: %+v", name, q)
		}
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
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("no state file after the first change: %v", err)
	}
	p.Set(1, 400)
	p.Set(0, 300)
	if w, ok := p.Original(1); !ok || w != 650 {
		t.Errorf("Original(1) = %v, %v", w, ok)
	}
	if err := p.Restore(); err != nil {
		t.Fatal(err)
	}
	// Restored in reverse order of the first changes: GPU 1, then GPU 0.
	if got := strings.Join(g.sets, " "); got != "0:500 1:400 0:300 1:650 0:700" {
		t.Errorf("set/restore order %q", got)
	}
	if _, err := os.Stat(file); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("state file left after Restore: %v", err)
	}
	if err := p.Restore(); err != nil || len(g.sets) != 5 {
		t.Errorf("second Restore: %v, sets %v", err, g.sets)
	}

	// Permission denied on the first change: nothing changed, no state file left.
	d, _ := NewFake(FakeOptions{DenySet: true})
	pd := NewPowerGuard(d, file)
	if err := pd.Set(0, 500); !errors.Is(err, ErrPermission) {
		t.Errorf("denied: %v", err)
	}
	if _, err := os.Stat(file); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("state file left after a refused change: %v", err)
	}
	if _, ok := pd.Original(0); ok {
		t.Error("refused change counted as a change")
	}
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
	h := &setLog{GPUs: f, fail: map[float64]error{700: errors.New("boom")}}
	ph := NewPowerGuard(h, file)
	ph.Set(0, 350)
	if err := ph.Restore(); err == nil {
		t.Error("failed restore: no error")
	}
	if _, err := os.Stat(file); err != nil {
		t.Errorf("state file gone after a failed restore: %v", err)
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
