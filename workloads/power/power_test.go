package power

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"llmbench/workloads/telemetry"
)

func TestParseLimits(t *testing.T) {
	cases := []struct {
		in   string
		want []float64
		err  bool
	}{
		{"600,500, 450", []float64{600, 500, 450}, false},
		{"300W", []float64{300}, false},
		{"", nil, true},
		{"600,,500", nil, true},
		{"-5", nil, true},
		{"abc", nil, true},
		{"0", nil, true},
	}
	for _, c := range cases {
		got, err := ParseLimits(c.in)
		if (err != nil) != c.err || !slices.Equal(got, c.want) {
			t.Errorf("ParseLimits(%q) = %v, %v", c.in, got, err)
		}
	}
}

func TestCheck(t *testing.T) {
	f, _ := telemetry.NewFake(telemetry.FakeOptions{})
	cases := []struct {
		name   string
		gpus   telemetry.GPUs
		limits []float64
		want   string
	}{
		{"ok", f, []float64{700, 200}, ""},
		{"no GPU", nil, []float64{500}, "NVML found no GPU (0 devices); nothing changed"},
		{"below range", f, []float64{500, 150}, "150 W is outside GPU 0's range 200–700 W"},
		{"above range", f, []float64{900}, "outside"},
	}
	for _, c := range cases {
		err := Check(c.gpus, "NVML found no GPU (0 devices)", c.limits, "")
		if (c.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// sweepSetup is a fake GPU pair, its guard and the state file.
func sweepSetup(t *testing.T, opt telemetry.FakeOptions) (*telemetry.Fake, *telemetry.PowerGuard, string) {
	t.Helper()
	opt.GPUs = 2
	f, err := telemetry.NewFake(opt)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), telemetry.PowerStateFile)
	return f, telemetry.NewPowerGuard(f, file), file
}

var fast = Settle{Poll: 5 * time.Millisecond, Timeout: 2 * time.Second}

func TestSweepRunsEveryPoint(t *testing.T) {
	f, guard, file := sweepSetup(t, telemetry.FakeOptions{})
	limits := []float64{600, 500, 450, 400, 350, 300, 250, 200}
	var seen []float64
	var logs []string
	logf := func(format string, a ...any) { logs = append(logs, fmt.Sprintf(format, a...)) }
	err := Sweep(context.Background(), f, guard, limits, fast, logf, func(ctx context.Context, p Point) error {
		seen = append(seen, p.LimitW)
		for i := range 2 {
			g, _ := f.Read(i)
			if g.PowerLimitW != p.LimitW || g.PowerW > p.LimitW*1.03 {
				t.Errorf("point %v: GPU %d at limit %v drawing %v", p.LimitW, i, g.PowerLimitW, g.PowerW)
			}
		}
		if !p.Settled || p.DrawW > 2*p.LimitW*1.03 || p.Index != len(seen)-1 {
			t.Errorf("point %+v", p)
		}
		if got := stateFiles(file); len(got) != 2 {
			t.Errorf("state files while limits are changed: %v; want one per GPU", got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(seen, limits) {
		t.Errorf("ran %v; want %v", seen, limits)
	}
	for i := range 2 {
		if w, _ := f.PowerLimit(i); w != 700 {
			t.Errorf("GPU %d left at %v W", i, w)
		}
	}
	if left := stateFiles(file); len(left) > 0 {
		t.Errorf("state files left after the sweep: %v", left)
	}
	if last := logs[len(logs)-1]; last != "power limits restored (700 W, 700 W)" || !strings.Contains(logs[0], "power limit 600 W: settled") {
		t.Errorf("logs %q", logs)
	}
}

// TestSweepRestoresWhenKilled stops the sweep midway in every way a run ends early
// in-process: cancellation (Ctrl-C), an error, a panic.
func TestSweepRestoresWhenKilled(t *testing.T) {
	boom := errors.New("boom")
	cases := []struct {
		name string
		stop func(cancel context.CancelFunc) error
		want error
	}{
		{"ctrl-c", func(cancel context.CancelFunc) error { cancel(); return context.Canceled }, context.Canceled},
		{"error", func(context.CancelFunc) error { return boom }, boom},
		{"panic", func(context.CancelFunc) error { panic("crash") }, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, guard, file := sweepSetup(t, telemetry.FakeOptions{})
			f.SetPowerLimit(1, 650) // GPU 1 starts elsewhere
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var ran []float64
			var err error
			func() {
				defer func() {
					if r := recover(); r != nil && c.name != "panic" {
						t.Errorf("unexpected panic %v", r)
					}
				}()
				err = Sweep(ctx, f, guard, []float64{500, 400, 300}, fast, nil, func(ctx context.Context, p Point) error {
					ran = append(ran, p.LimitW)
					if p.LimitW == 400 {
						return c.stop(cancel)
					}
					return nil
				})
			}()
			if c.want != nil && !errors.Is(err, c.want) {
				t.Errorf("err = %v; want %v", err, c.want)
			}
			if !slices.Equal(ran, []float64{500, 400}) {
				t.Errorf("ran %v", ran)
			}
			for i, want := range []float64{700, 650} {
				if w, _ := f.PowerLimit(i); w != want {
					t.Errorf("GPU %d at %v W; want %v restored", i, w, want)
				}
			}
			if left := stateFiles(file); len(left) > 0 {
				t.Errorf("state files left: %v", left)
			}
		})
	}
}

// stateFiles lists the power state files beside file (the legacy one and each
// GPU's).
func stateFiles(file string) []string {
	stem := strings.TrimSuffix(file, filepath.Ext(file))
	m, _ := filepath.Glob(stem + "*.json")
	return m
}

// TestSweepStateFileAfterCrash: a process that dies mid-sweep (no defer runs) leaves
// the limit changed and its GPU's state file, its lock gone with it; the next start
// restores from the file.
func TestSweepStateFileAfterCrash(t *testing.T) {
	dir := t.TempDir()
	fakeState := filepath.Join(dir, telemetry.FakeStateFile)
	file := filepath.Join(dir, telemetry.PowerStateFile)
	f, _ := telemetry.NewFake(telemetry.FakeOptions{StateFile: fakeState})
	// What a killed process leaves: the limit changed and the GPU's state file
	// written; the kernel dropped its lock, and Restore never ran.
	if err := f.SetPowerLimit(0, 350); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "power-limits-fake-GPU-fake-0000-0000.json"),
		[]byte(`{"pid": 2147483646, "kind": "fake", "limits": [{"index": 0, "uuid": "GPU-fake-0000-0000", "limit_w": 700}]}`), 0o644)
	// The next start: a new Fake reads the persisted limit, RestoreSaved puts it back.
	g, _ := telemetry.NewFake(telemetry.FakeOptions{StateFile: fakeState})
	if w, _ := g.PowerLimit(0); w != 350 {
		t.Fatalf("persisted limit %v", w)
	}
	lines, err := telemetry.RestoreSaved(g, file)
	if err != nil || len(lines) != 1 || !strings.Contains(lines[0], "left at 350 W by llmbench pid 2147483646") {
		t.Fatalf("RestoreSaved: %v %v", lines, err)
	}
	if w, _ := g.PowerLimit(0); w != 700 {
		t.Errorf("after the next start: %v W", w)
	}
	if left := stateFiles(file); len(left) > 0 {
		t.Errorf("state files left: %v", left)
	}
}

// TestSweepRefusedWhileAnotherHoldsTheGPU: a second sweep of the same GPU (another
// guard, as another process would hold) refuses before changing anything, names the
// holder, does not claim to restore, and the first sweep restores the original.
func TestSweepRefusedWhileAnotherHoldsTheGPU(t *testing.T) {
	dir := t.TempDir()
	fakeState := filepath.Join(dir, telemetry.FakeStateFile)
	file := filepath.Join(dir, telemetry.PowerStateFile)
	a, _ := telemetry.NewFake(telemetry.FakeOptions{StateFile: fakeState})
	b, _ := telemetry.NewFake(telemetry.FakeOptions{StateFile: fakeState})
	ga, gb := telemetry.NewPowerGuard(a, file), telemetry.NewPowerGuard(b, file)
	var inner error
	var logs []string
	err := Sweep(context.Background(), a, ga, []float64{300, 400}, fast, nil, func(ctx context.Context, p Point) error {
		if p.LimitW != 300 {
			return nil
		}
		if err := Check(b, "", []float64{500}, file); !errors.Is(err, telemetry.ErrLocked) || !strings.Contains(err.Error(), "nothing changed") {
			t.Errorf("Check while held: %v", err)
		}
		ran := false
		inner = Sweep(ctx, b, gb, []float64{500}, fast, func(f string, a ...any) { logs = append(logs, fmt.Sprintf(f, a...)) },
			func(context.Context, Point) error { ran = true; return nil })
		if ran {
			t.Error("the second sweep ran")
		}
		if w, _ := b.PowerLimit(0); w != 300 {
			t.Errorf("the second sweep changed the limit to %v W", w)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(inner, telemetry.ErrLocked) || !strings.Contains(inner.Error(), fmt.Sprintf("pid %d", os.Getpid())) ||
		!strings.Contains(inner.Error(), "nothing changed") || len(logs) != 0 {
		t.Errorf("second sweep: %v, logs %q", inner, logs)
	}
	if w, _ := b.PowerLimit(0); w != 700 {
		t.Errorf("ended at %v W; want 700", w)
	}
	if err := Check(b, "", []float64{500}, file); err != nil {
		t.Errorf("Check once free: %v", err)
	}
	if left := stateFiles(file); len(left) > 0 {
		t.Errorf("state files left: %v", left)
	}
}

func TestSweepPermissionDenied(t *testing.T) {
	f, guard, file := sweepSetup(t, telemetry.FakeOptions{DenySet: true})
	ran := false
	err := Sweep(context.Background(), f, guard, []float64{500}, fast, nil, func(context.Context, Point) error { ran = true; return nil })
	if err == nil || !strings.Contains(err.Error(), "needs root") || !strings.Contains(err.Error(), "nothing changed") || ran {
		t.Errorf("err %v, ran %v", err, ran)
	}
	if left := stateFiles(file); len(left) > 0 {
		t.Errorf("state files left: %v", left)
	}
}

func TestSettleTimeout(t *testing.T) {
	// A load that changes at every reading keeps the draw moving; with an impossible
	// tolerance the wait can only time out.
	load := 0.0
	f, guard, _ := sweepSetup(t, telemetry.FakeOptions{Load: func() float64 { load = 1 - load; return load }})
	st := Settle{Poll: time.Millisecond, Timeout: 20 * time.Millisecond, Tolerance: 1e-12}
	var p Point
	err := Sweep(context.Background(), f, guard, []float64{700}, st, nil, func(_ context.Context, q Point) error { p = q; return nil })
	if err != nil || p.Settled || p.Waited < 20*time.Millisecond {
		t.Errorf("%+v %v", p, err)
	}
}

func TestTable(t *testing.T) {
	rows, ws := Table([]string{"pp512", "tg128", "pp512", "tg128"}, []float64{300, 300, 600, 600}, []float64{1, 2, 3, 4})
	if len(rows) != 2 || !slices.Equal(ws, []float64{600, 300}) || rows[0].Values[600] != 3 || rows[1].Values[300] != 2 {
		t.Errorf("%+v %v", rows, ws)
	}
}
