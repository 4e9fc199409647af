package micro

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// threadIDs lists the process's OS threads (every thread the Go runtime runs the
// engine's worker goroutines on).
func threadIDs() ([]int, error) {
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil, err
	}
	var ids []int
	for _, e := range ents {
		if id, err := strconv.Atoi(e.Name()); err == nil {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// eachThread calls f for every thread of the process; a thread that exited meanwhile
// (ESRCH) is skipped. Threads started later inherit the setting from the thread that
// creates them, which already has it.
func eachThread(f func(tid int) error) error {
	ids, err := threadIDs()
	if err != nil {
		return err
	}
	for _, id := range ids {
		if err := f(id); err != nil && !errors.Is(err, unix.ESRCH) {
			return err
		}
	}
	return nil
}

// setAffinity restricts every thread of the process to cpus (sched_setaffinity), so
// the engine's workers run only there, and returns the function restoring the mask
// the calling thread had. Empty cpus changes nothing.
func setAffinity(cpus []int) (restore func() error, err error) {
	if len(cpus) == 0 {
		return func() error { return nil }, nil
	}
	var old, set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return nil, fmt.Errorf("sched_getaffinity: %w", err)
	}
	for _, c := range cpus {
		if c >= len(set)*64 {
			return nil, fmt.Errorf("-C: CPU %d is beyond the %d the kernel interface holds", c, len(set)*64)
		}
		set.Set(c)
	}
	if err := maskAll(&set); err != nil {
		_ = maskAll(&old)
		return nil, fmt.Errorf("-C: CPUs %s: %w", cpuList(cpus), err)
	}
	return func() error { return maskAll(&old) }, nil
}

// maskAll gives every thread of the process the CPU mask set. A thread the runtime
// starts while a pass runs inherits its parent's mask, which the pass may already have
// changed or not yet reached, so passes repeat until one finds every thread with set
// (a thread left pinned to one CPU after -C would halve the next test's cores).
func maskAll(set *unix.CPUSet) error {
	return settleThreads("CPU mask", func(tid int) bool {
		var cur unix.CPUSet
		return unix.SchedGetaffinity(tid, &cur) == nil && cur == *set
	}, func(tid int) error { return unix.SchedSetaffinity(tid, set) })
}

// settleThreads applies set to every thread of the process that is not yet done
// (done(tid) false), pass after pass until a pass finds every thread done: a thread
// the runtime starts during a pass inherits its creator's old value (the race
// detector's runtime starts them often), and would otherwise keep it.
func settleThreads(what string, done func(tid int) bool, set func(tid int) error) error {
	for range 100 {
		changed := false
		err := eachThread(func(tid int) error {
			if done(tid) {
				return nil
			}
			changed = true
			return set(tid)
		})
		if err != nil || !changed {
			return err
		}
	}
	return errors.New("threads kept starting while their " + what + " was set")
}

// niceOf reads the nice value of the calling thread.
func niceOf() (int, error) {
	// The raw getpriority system call answers 20 - nice.
	v, err := unix.Getpriority(unix.PRIO_PROCESS, 0)
	if err != nil {
		return 0, err
	}
	return 20 - v, nil
}

// setNice sets the nice value of every thread of the process (on Linux each thread
// has its own) and returns the function restoring the old one.
func setNice(nice int) (restore func() error, err error) {
	old, err := niceOf()
	if err != nil {
		return nil, fmt.Errorf("getpriority: %w", err)
	}
	if old == nice {
		return func() error { return nil }, nil
	}
	to := func(n int) error {
		return settleThreads("nice value", func(tid int) bool {
			v, err := unix.Getpriority(unix.PRIO_PROCESS, tid)
			return err == nil && 20-v == n
		}, func(tid int) error { return unix.Setpriority(unix.PRIO_PROCESS, tid, n) })
	}
	if err := to(nice); err != nil {
		return nil, fmt.Errorf("setpriority %d: %w (a negative nice value needs CAP_SYS_NICE)", nice, err)
	}
	return func() error { return to(old) }, nil
}

// numaCPUs returns the CPUs --numa places the process on: isolate, the CPUs of the
// NUMA node the calling thread runs on; distribute, every online CPU (threads spread
// over all nodes); numactl, nil (keep the CPU set numactl started us with).
func numaCPUs(mode string) ([]int, error) {
	switch mode {
	case "distribute":
		return readCPUList("/sys/devices/system/cpu/online")
	case "isolate":
		cpu, err := currentCPU()
		if err != nil {
			return nil, err
		}
		nodes, _ := os.ReadDir("/sys/devices/system/node")
		for _, n := range nodes {
			if !strings.HasPrefix(n.Name(), "node") {
				continue
			}
			cpus, err := readCPUList("/sys/devices/system/node/" + n.Name() + "/cpulist")
			if err != nil {
				continue
			}
			for _, c := range cpus {
				if c == cpu {
					return cpus, nil
				}
			}
		}
		return nil, fmt.Errorf("--numa isolate: no NUMA node lists CPU %d", cpu)
	}
	return nil, nil
}

// currentCPU is the CPU the calling thread last ran on (/proc/thread-self/stat,
// field 39).
func currentCPU() (int, error) {
	b, err := os.ReadFile("/proc/thread-self/stat")
	if err != nil {
		return 0, err
	}
	s := string(b)
	// Fields after the command name (which may hold spaces) start after its ')'.
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 37 {
		return 0, errors.New("/proc/thread-self/stat: too few fields")
	}
	return strconv.Atoi(f[36])
}

// readCPUList parses a kernel CPU list file ("0-3,8-11").
func readCPUList(path string) ([]int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseCPUList(strings.TrimSpace(string(b)))
}

// parseCPUList parses the kernel's CPU list format ("0-3,8,10-11").
func parseCPUList(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil, fmt.Errorf("CPU list %q: %w", s, err)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil {
				return nil, fmt.Errorf("CPU list %q: %w", s, err)
			}
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	return out, nil
}
