package micro

import (
	"fmt"
	"strings"

	"llmbench/engine"
	"llmbench/workloads"
)

// Placement is llama-bench's process-wide CPU placement of a run: --prio and --numa,
// applied before the first test and undone after the last.
type Placement struct {
	Prio int    // -1..3, llama.cpp's scheduling priorities
	NUMA string // "", distribute, isolate, numactl
}

// prioNice maps llama-bench's --prio to the nice value llama.cpp sets on POSIX
// (set_process_priority): low 5, normal 0, medium -5, high -10, realtime -20.
func prioNice(prio int) int {
	switch prio {
	case -1:
		return 5
	case 1:
		return -5
	case 2:
		return -10
	case 3:
		return -20
	}
	return 0
}

// poller is a backend whose idle workers' busy-wait can be set (the CPU backend's
// --poll).
type poller interface{ SetPoll(level int) }

// setPoll applies in's --poll to e's backend.
func setPoll(e *engine.Engine, in Instance) error {
	p, ok := e.Backend().(poller)
	if !ok {
		if in.Poll != workloads.DefaultPoll {
			return fmt.Errorf("--poll %d: backend %s has no polling setting", in.Poll, e.Backend().Name())
		}
		return nil
	}
	p.SetPoll(in.Poll)
	return nil
}

// maskCPUs returns the CPUs of in's -C mask, nil for no mask ("0x0").
func maskCPUs(in Instance) ([]int, error) {
	cpus, err := workloads.ParseCPUMask(in.CPUMask)
	if err != nil {
		return nil, fmt.Errorf("-C: %w", err)
	}
	return cpus, nil
}

// cpuList formats CPUs as "0,2,3".
func cpuList(cpus []int) string {
	s := make([]string, len(cpus))
	for i, c := range cpus {
		s[i] = fmt.Sprint(c)
	}
	return strings.Join(s, ",")
}
