package telemetry

import (
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

// cpuTimes is one core's busy and total jiffies; core is its number (-1: the line
// of all cores).
type cpuTimes struct {
	core        int
	busy, total uint64
}

// raplZone is one RAPL package counter and the running total read from it.
type raplZone struct {
	energy     procFile
	last, max  uint64
	totalMicro float64
}

// procFile reads one procfs or sysfs file again and again through a descriptor it
// keeps open, into a buffer it keeps: the kernel writes the file afresh on every read
// from its start. A reading at the default 10 Hz ran on the cores it measures, and
// opening, reading (with Go's growing buffers) and closing /proc/stat, /proc/cpuinfo
// and /proc/self/statm took 290 µs where the kept descriptors take about 30 (2-core
// AMD EPYC), with near nothing left for the garbage collector.
type procFile struct {
	path string
	f    *os.File
	buf  []byte
}

// read returns the file's whole content, valid until the next read.
func (p *procFile) read() ([]byte, error) {
	if p.f == nil {
		f, err := os.Open(p.path)
		if err != nil {
			return nil, err
		}
		p.f = f
	}
	if p.buf == nil {
		p.buf = make([]byte, 4096)
	}
	for {
		n, err := preadFile(p.f, p.buf, 0)
		if n == len(p.buf) { // perhaps more: read it all again into twice the room
			p.buf = make([]byte, 2*len(p.buf))
			continue
		}
		if err != nil {
			p.close() // reopened on the next read (a file that went and came back)
			return nil, err
		}
		return p.buf[:n], nil
	}
}

// uint reads the file as one unsigned decimal number.
func (p *procFile) uint() (uint64, error) {
	data, err := p.read()
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(string(bytes.TrimSpace(data)), 10, 64)
}

func (p *procFile) close() {
	if p.f != nil {
		p.f.Close()
		p.f = nil
	}
}

// CPUReader reads CPU telemetry from procfs and sysfs under a root ("/" normally; a
// directory of fixture files in tests). It keeps the previous counters, so
// utilisation and power are deltas between calls, and the files it reads open (Close
// releases them); it is not safe for concurrent use.
type CPUReader struct {
	root        string
	stat, statm procFile
	cpuinfo     procFile
	freqs       []procFile // each core's cpufreq scaling_cur_freq, in core order
	cur, prev   []cpuTimes
	prevA       cpuTimes
	rapl        []*raplZone
	noteR       string
	lastT       time.Time
	lastE       float64
	now         func() time.Time
}

// NewCPUReader returns a reader of this machine's CPU.
func NewCPUReader() *CPUReader { return newCPUReader("/", time.Now) }

func newCPUReader(root string, now func() time.Time) *CPUReader {
	c := &CPUReader{root: root, now: now}
	c.stat.path, c.statm.path, c.cpuinfo.path = c.path("proc/stat"), c.path("proc/self/statm"), c.path("proc/cpuinfo")
	files, _ := filepath.Glob(c.path("sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_cur_freq"))
	sort.Slice(files, func(i, j int) bool {
		return coreNum(filepath.Base(filepath.Dir(filepath.Dir(files[i])))) < coreNum(filepath.Base(filepath.Dir(filepath.Dir(files[j]))))
	})
	for _, f := range files {
		c.freqs = append(c.freqs, procFile{path: f})
	}
	c.findRAPL()
	return c
}

// Close releases the files the reader keeps open.
func (c *CPUReader) Close() {
	c.stat.close()
	c.statm.close()
	c.cpuinfo.close()
	for i := range c.freqs {
		c.freqs[i].close()
	}
	for _, z := range c.rapl {
		z.energy.close()
	}
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
		zone := &raplZone{energy: procFile{path: filepath.Join(z, "energy_uj")}}
		e, err := zone.energy.uint()
		if err != nil {
			zone.energy.close()
			continue
		}
		mf := procFile{path: filepath.Join(z, "max_energy_range_uj")}
		m, err := mf.uint()
		mf.close()
		if err != nil || m == 0 {
			m = 1<<32 - 1 // a counter of unknown range: assume 32 bits of µJ
		}
		zone.last, zone.max = e, m
		c.rapl = append(c.rapl, zone)
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
	if data, err := c.stat.read(); err == nil {
		var all cpuTimes
		var ok bool
		c.cur, all, ok = parseStat(data, c.cur[:0])
		if ok {
			if c.prev != nil && sameCores(c.prev, c.cur) {
				u.Util = make([]float64, len(c.cur))
				for i := range c.cur {
					u.Util[i] = busyPct(c.prev[i], c.cur[i])
				}
				u.UtilAll = busyPct(c.prevA, all)
			}
			c.prev, c.cur, c.prevA = c.cur, c.prev, all
		}
	}
	u.MHz = c.readMHz()
	u.RSS = c.readRSS()
	if len(c.rapl) > 0 {
		var total float64
		for _, z := range c.rapl {
			if e, err := z.energy.uint(); err == nil {
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

// sameCores reports whether two readings of /proc/stat list the same cores (none went
// offline or came online between them).
func sameCores(a, b []cpuTimes) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].core != b[i].core {
			return false
		}
	}
	return true
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

// parseStat parses /proc/stat's cpu lines (busy = total − idle − iowait), appending
// the cores' to cores in the file's order; all is the line of all cores, found whether
// it was there.
func parseStat(data []byte, cores []cpuTimes) (_ []cpuTimes, all cpuTimes, found bool) {
	for len(data) > 0 {
		var line []byte
		line, data = nextLine(data)
		name, rest := nextField(line)
		if !bytes.HasPrefix(name, []byte("cpu")) {
			continue
		}
		t := cpuTimes{core: -1}
		var idle uint64
		n := 0
		for ; n < 8; n++ { // guest and guest_nice are already counted in user and nice
			var f []byte
			if f, rest = nextField(rest); len(f) == 0 {
				break
			}
			v, ok := parseUint(f)
			if !ok {
				n = -1
				break
			}
			t.total += v
			if n == 3 || n == 4 { // idle, iowait
				idle += v
			}
		}
		if n < 4 {
			continue // too few fields, or one not a number
		}
		t.busy = t.total - idle
		if len(name) == 3 {
			all, found = t, true
		} else if core, ok := parseUint(name[3:]); ok {
			t.core = int(core)
			cores = append(cores, t)
		}
	}
	return cores, all, found
}

// nextLine splits the first line (without its newline) off data.
func nextLine(data []byte) (line, rest []byte) {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return data[:i], data[i+1:]
	}
	return data, nil
}

// nextField splits the first space-separated field off line.
func nextField(line []byte) (field, rest []byte) {
	i := 0
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	j := i
	for j < len(line) && line[j] != ' ' && line[j] != '\t' {
		j++
	}
	return line[i:j], line[j:]
}

// parseUint parses a decimal number (no allocation: strconv copies the string only
// into an error).
func parseUint(b []byte) (uint64, bool) {
	v, err := strconv.ParseUint(string(b), 10, 64)
	return v, err == nil
}

// readMHz reads every core's cpufreq scaling_cur_freq (kHz), else /proc/cpuinfo's
// "cpu MHz" lines.
func (c *CPUReader) readMHz() []float64 {
	var out []float64
	for i := range c.freqs {
		if v, err := c.freqs[i].uint(); err == nil {
			out = append(out, float64(v)/1000)
		}
	}
	if len(out) > 0 {
		return out
	}
	data, err := c.cpuinfo.read()
	if err != nil {
		return nil
	}
	for len(data) > 0 {
		var line []byte
		line, data = nextLine(data)
		k, v, ok := bytes.Cut(line, []byte(":"))
		if ok && string(bytes.TrimSpace(k)) == "cpu MHz" {
			if f, err := strconv.ParseFloat(string(bytes.TrimSpace(v)), 64); err == nil {
				out = append(out, f)
			}
		}
	}
	return out
}

// readRSS reads this process's resident set from /proc/self/statm (pages).
func (c *CPUReader) readRSS() int64 {
	data, err := c.statm.read()
	if err != nil {
		return 0
	}
	_, rest := nextField(data)
	f, _ := nextField(rest)
	pages, ok := parseUint(f)
	if !ok {
		return 0
	}
	return int64(pages) * int64(os.Getpagesize())
}
