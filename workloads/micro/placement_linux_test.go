package micro

import (
	"runtime"
	"slices"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// TestSetAffinityPinsEveryThread checks -C: after setAffinity every OS thread of the
// process, and a goroutine started afterwards on a fresh locked thread, runs on the
// mask's CPUs only; restore brings the old set back.
func TestSetAffinityPinsEveryThread(t *testing.T) {
	var old unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		t.Skip("sched_getaffinity:", err)
	}
	first := -1
	for c := range runtime.NumCPU() {
		if old.IsSet(c) {
			first = c
			break
		}
	}
	if first < 0 {
		t.Skip("no CPU in the affinity set")
	}
	restore, err := setAffinity([]int{first})
	if err != nil {
		t.Fatal(err)
	}
	check := func(tid int, want func(*unix.CPUSet) bool, what string) {
		var s unix.CPUSet
		if err := unix.SchedGetaffinity(tid, &s); err == nil && !want(&s) {
			t.Errorf("thread %d: CPU set of %d CPUs %s", tid, s.Count(), what)
		}
	}
	ids, _ := threadIDs()
	for _, id := range ids {
		check(id, func(s *unix.CPUSet) bool { return s.Count() == 1 && s.IsSet(first) }, "after -C")
	}
	// A worker thread the runtime creates now inherits the mask.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		runtime.LockOSThread()
		check(0, func(s *unix.CPUSet) bool { return s.Count() == 1 && s.IsSet(first) }, "on a new worker")
	}()
	wg.Wait()
	if err := restore(); err != nil {
		t.Fatal(err)
	}
	ids, _ = threadIDs()
	for _, id := range ids {
		check(id, func(s *unix.CPUSet) bool { return *s == old }, "after restore")
	}
	if r, err := setAffinity(nil); err != nil || r() != nil {
		t.Errorf("an empty mask must change nothing: %v", err)
	}
}

func TestSetNice(t *testing.T) {
	before, err := niceOf()
	if err != nil {
		t.Skip(err)
	}
	restore, err := setNice(before + 1)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := niceOf(); n != before+1 {
		t.Errorf("nice %d after setNice(%d)", n, before+1)
	}
	if err := restore(); err != nil {
		t.Logf("restore needs CAP_SYS_NICE here: %v", err)
	}
	for prio, want := range map[int]int{-1: 5, 0: 0, 1: -5, 2: -10, 3: -20} {
		if got := prioNice(prio); got != want {
			t.Errorf("prioNice(%d) = %d; want %d", prio, got, want)
		}
	}
}

func TestParseCPUList(t *testing.T) {
	got, err := parseCPUList("0-3,8,10-11")
	if err != nil || !slices.Equal(got, []int{0, 1, 2, 3, 8, 10, 11}) {
		t.Errorf("got %v, %v", got, err)
	}
	if _, err := parseCPUList("0-x"); err == nil {
		t.Error("bad list accepted")
	}
	cpus, err := numaCPUs("distribute")
	if err != nil || len(cpus) == 0 {
		t.Errorf("distribute: %v %v", cpus, err)
	}
	if cpus, err := numaCPUs("isolate"); err != nil || len(cpus) == 0 {
		t.Logf("isolate on this machine: %v %v", cpus, err)
	}
}
