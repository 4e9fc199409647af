package telemetry

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// CPUUsage is one reading of the CPU: utilisation per core, frequency, this process's
// resident set and, when RAPL is readable, the package energy.
type CPUUsage struct {
	// Util is each core's busy percentage since the previous reading (empty on the
	// first); UtilAll is the machine's.
	Util    []float64 `json:"util"`
	UtilAll float64   `json:"util_all"`
	// MHz is each core's current frequency (cpufreq, else /proc/cpuinfo).
	MHz []float64 `json:"mhz"`
	RSS int64     `json:"rss_bytes"` // this process's resident set
	// EnergyJ is the package energy (RAPL, all packages summed) since the first
	// reading, wraparound handled; PowerW the mean power since the previous reading.
	EnergyJ   float64 `json:"energy_j"`
	PowerW    float64 `json:"power_w"`
	HasEnergy bool    `json:"has_energy"`
	// Note says why a reading is missing ("RAPL: not readable").
	Note string `json:"note,omitempty"`
}

// MeanMHz returns the mean of the per-core frequencies (0 when unknown).
func (c CPUUsage) MeanMHz() float64 {
	if len(c.MHz) == 0 {
		return 0
	}
	var s float64
	for _, v := range c.MHz {
		s += v
	}
	return s / float64(len(c.MHz))
}

// cpuTimes is one core's busy and total jiffies.
type cpuTimes struct{ busy, total uint64 }

// raplZone is one RAPL package counter and the running total read from it.
type raplZone struct {
	dir        string
	last, max  uint64
	totalMicro float64
}

// CPUReader reads CPU telemetry from procfs and sysfs under a root ("/" normally; a
// directory of fixture files in tests). It keeps the previous counters, so
// utilisation and power are deltas between calls; it is not safe for concurrent use.
type CPUReader struct {
	root  string
	prev  map[string]cpuTimes
	prevA cpuTimes
	rapl  []*raplZone
	noteR string
	lastT time.Time
	lastE float64
	now   func() time.Time
}

// NewCPUReader returns a reader of this machine's CPU.
func NewCPUReader() *CPUReader { return newCPUReader("/", time.Now) }

func newCPUReader(root string, now func() time.Time) *CPUReader {
	c := &CPUReader{root: root, now: now}
	c.findRAPL()
	return c
}

func (c *CPUReader) path(p string) string { return filepath.Join(c.root, p) }

// findRAPL lists the package zones (intel-rapl:N, not their sub-zones) whose
// energy_uj can be read.
func (c *CPUReader) findRAPL() {
	zones, _ := filepath.Glob(c.path("sys/class/powercap/intel-rapl:*"))
	sort.Strings(zones)
	seen := 0
	for _, z := range zones {
		if strings.Count(filepath.Base(z), ":") != 1 {
			continue // a sub-zone (core, uncore, dram) is part of its package
		}
		seen++
		e, err := readUint(filepath.Join(z, "energy_uj"))
		if err != nil {
			continue
		}
		m, err := readUint(filepath.Join(z, "max_energy_range_uj"))
		if err != nil || m == 0 {
			m = 1<<32 - 1 // a counter of unknown range: assume 32 bits of µJ
		}
		c.rapl = append(c.rapl, &raplZone{dir: z, last: e, max: m})
	}
	switch {
	case seen == 0:
		c.noteR = "RAPL: no powercap zones"
	case len(c.rapl) == 0:
		c.noteR = "RAPL: energy_uj not readable (needs root on recent kernels)"
	}
}

// Read returns a reading; the first call's utilisation is empty.
func (c *CPUReader) Read() CPUUsage {
	var u CPUUsage
	now := c.now()
	if cur, all, ok := c.readStat(); ok {
		if c.prev != nil {
			names := make([]string, 0, len(cur))
			for k := range cur {
				names = append(names, k)
			}
			sort.Slice(names, func(i, j int) bool { return coreNum(names[i]) < coreNum(names[j]) })
			for _, k := range names {
				u.Util = append(u.Util, busyPct(c.prev[k], cur[k]))
			}
			u.UtilAll = busyPct(c.prevA, all)
		}
		c.prev, c.prevA = cur, all
	}
	u.MHz = c.readMHz()
	u.RSS = c.readRSS()
	if len(c.rapl) > 0 {
		var total float64
		for _, z := range c.rapl {
			if e, err := readUint(filepath.Join(z.dir, "energy_uj")); err == nil {
				z.totalMicro += float64(raplDelta(z.last, e, z.max))
				z.last = e
			}
			total += z.totalMicro
		}
		u.EnergyJ, u.HasEnergy = total/1e6, true
		if !c.lastT.IsZero() {
			if dt := now.Sub(c.lastT).Seconds(); dt > 0 {
				u.PowerW = (u.EnergyJ - c.lastE) / dt
			}
		}
		c.lastT, c.lastE = now, u.EnergyJ
	} else {
		u.Note = c.noteR
	}
	return u
}

// raplDelta is the energy between two readings of a counter that wraps to 0 after
// max (max_energy_range_uj), as powercap tools compute it.
func raplDelta(prev, cur, max uint64) uint64 {
	if cur >= prev {
		return cur - prev
	}
	return max - prev + cur
}

func busyPct(a, b cpuTimes) float64 {
	if b.total <= a.total || b.busy < a.busy {
		return 0
	}
	return 100 * float64(b.busy-a.busy) / float64(b.total-a.total)
}

func coreNum(name string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(name, "cpu"))
	return n
}

// readStat parses /proc/stat's cpu lines: busy = total − idle − iowait.
func (c *CPUReader) readStat() (map[string]cpuTimes, cpuTimes, bool) {
	data, err := os.ReadFile(c.path("proc/stat"))
	if err != nil {
		return nil, cpuTimes{}, false
	}
	return parseStat(data)
}

func parseStat(data []byte) (map[string]cpuTimes, cpuTimes, bool) {
	cores := map[string]cpuTimes{}
	var all cpuTimes
	found := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 5 || !strings.HasPrefix(f[0], "cpu") {
			continue
		}
		var t cpuTimes
		var idle uint64
		ok := true
		for i, s := range f[1:] {
			if i >= 8 { // guest and guest_nice are already counted in user and nice
				break
			}
			v, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				ok = false
				break
			}
			t.total += v
			if i == 3 || i == 4 { // idle, iowait
				idle += v
			}
		}
		if !ok {
			continue
		}
		t.busy = t.total - idle
		if f[0] == "cpu" {
			all, found = t, true
		} else if _, err := strconv.Atoi(f[0][3:]); err == nil {
			cores[f[0]] = t
		}
	}
	return cores, all, found
}

// readMHz reads every core's cpufreq scaling_cur_freq (kHz), else /proc/cpuinfo's
// "cpu MHz" lines.
func (c *CPUReader) readMHz() []float64 {
	files, _ := filepath.Glob(c.path("sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_cur_freq"))
	sort.Slice(files, func(i, j int) bool {
		return coreNum(filepath.Base(filepath.Dir(filepath.Dir(files[i])))) < coreNum(filepath.Base(filepath.Dir(filepath.Dir(files[j]))))
	})
	var out []float64
	for _, f := range files {
		if v, err := readUint(f); err == nil {
			out = append(out, float64(v)/1000)
		}
	}
	if len(out) > 0 {
		return out
	}
	data, err := os.ReadFile(c.path("proc/cpuinfo"))
	if err != nil {
		return nil
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "cpu MHz" {
			if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
				out = append(out, f)
			}
		}
	}
	return out
}

// readRSS reads this process's resident set from /proc/self/statm (pages).
func (c *CPUReader) readRSS() int64 {
	data, err := os.ReadFile(c.path("proc/self/statm"))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data))
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * int64(os.Getpagesize())
}

func readUint(path string) (uint64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64)
}
