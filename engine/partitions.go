package engine

import (
	"cmp"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"llmbench/engine/model"
	"llmbench/kernels"
)

// PartitionSize is the positions of one partition of partitioned decode attention
// (vLLM's 512).
const PartitionSize = 512

// CalibrationMaxCtx is the longest context a partition calibration measures; rows
// with longer contexts follow the longest measured length.
const CalibrationMaxCtx = 16384

// calibrationVersion is part of a stored calibration's key: bump it when the kernels
// or the measurement change, so that older measurements are not reused.
const calibrationVersion = 5

// PartitionsEnv names the environment variable that, when Options.Partitions is
// PartitionsAuto and Options.PartitionFrom is 0, forces the choice: "off", "on",
// "auto", or a context length (the crossover, no measurement).
const PartitionsEnv = "LLMBENCH_PARTITIONS"

// PartitionMode chooses between one-pass and partitioned attention.
type PartitionMode int

const (
	// PartitionsAuto partitions a row's attention when its own context is at least the
	// crossover measured on this machine at this thread count (or Options.PartitionFrom).
	PartitionsAuto PartitionMode = iota
	// PartitionsOff never partitions: every row takes the one-pass path.
	PartitionsOff
	// PartitionsOn partitions every row.
	PartitionsOn
)

// String returns "auto", "off" or "on".
func (m PartitionMode) String() string {
	switch m {
	case PartitionsOff:
		return "off"
	case PartitionsOn:
		return "on"
	}
	return "auto"
}

// PartitionInfo says how the engine chooses partitioned attention.
type PartitionInfo struct {
	Mode PartitionMode
	Size int // positions per partition
	// From is the shortest context, in positions, whose rows take partitions (0 with
	// PartitionsOn: all; 0 with PartitionsOff or an auto crossover never reached: none).
	From int
	// Source says where the choice came from: "option", "env", "measured", "stored
	// calibration <file>", or why partitions are unavailable.
	Source string
	// Calibration is the measurement behind an auto From (nil when none was made).
	Calibration *kernels.Crossover
}

// String describes the choice in one line.
func (p PartitionInfo) String() string {
	switch {
	case p.Mode == PartitionsOff || (p.Mode == PartitionsAuto && p.From == 0):
		return fmt.Sprintf("paged attention: partitions off (%s, %s)", p.Mode, p.Source)
	case p.Mode == PartitionsOn:
		return fmt.Sprintf("paged attention: partitions of %d on for every row (%s)", p.Size, p.Source)
	}
	return fmt.Sprintf("paged attention: partitions of %d from a context of %d (auto, %s)", p.Size, p.From, p.Source)
}

// Partitions returns how the engine chooses partitioned attention.
func (e *Engine) Partitions() PartitionInfo { return e.part }

// apply sets the partition fields of a forward pass's state.
func (p PartitionInfo) apply(st *model.State) {
	st.Partition, st.PartitionMin = 0, 0
	switch {
	case p.Mode == PartitionsOn:
		st.Partition = p.Size
	case p.Mode == PartitionsAuto && p.From > 0:
		st.Partition, st.PartitionMin = p.Size, p.From
	}
}

// choosePartitions resolves o's partition choice for m on be: forced modes and
// crossovers from the options or PartitionsEnv as given, else a stored calibration for
// this backend, thread count, head layout, cache type and path, else a measurement
// (stored for next time; a store that fails is not an error).
func choosePartitions(m *model.Model, be kernels.Backend, o *Options) (PartitionInfo, error) {
	p := PartitionInfo{Mode: o.Partitions, Size: cmp.Or(o.PartitionSize, PartitionSize), From: o.PartitionFrom, Source: "option"}
	if o.PartitionSize < 0 || o.PartitionFrom < 0 {
		return p, fmt.Errorf("engine: partition size %d, crossover %d", o.PartitionSize, o.PartitionFrom)
	}
	if p.Mode == PartitionsAuto && p.From == 0 {
		switch v := strings.TrimSpace(os.Getenv(PartitionsEnv)); v {
		case "", "auto":
		case "off":
			p.Mode, p.Source = PartitionsOff, "env"
		case "on":
			p.Mode, p.Source = PartitionsOn, "env"
		default:
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return p, fmt.Errorf("engine: %s=%q: want off, on, auto or a context length", PartitionsEnv, v)
			}
			p.From, p.Source = n, "env"
		}
	}
	if p.Mode != PartitionsAuto {
		p.From = 0
		return p, nil
	}
	if p.From > 0 {
		return p, nil
	}
	cal, ok := be.(kernels.PartitionCalibrator)
	if !ok {
		p.Source = "the backend has no partitioned attention"
		return p, nil
	}
	a := kernels.Attention{Heads: m.Heads, KVHeads: m.KVHeads, HeadDim: m.HeadDim, K: kernels.KVView{Type: o.KVType},
		BlockSize: o.BlockSize, Flash: o.FlashAttn}
	maxCtx := min(o.Context, CalibrationMaxCtx)
	key := fmt.Sprintf("v%d %s threads=%d cpus=%d heads=%d/%d head-dim=%d kv=%s flash=%v block=%d partition=%d max-ctx=%d",
		calibrationVersion, be.Name(), be.Threads(), runtime.NumCPU(), m.Heads, m.KVHeads, m.HeadDim, o.KVType, o.FlashAttn, o.BlockSize, p.Size, maxCtx)
	file := calibrationFile(o.CalibrationDir, key)
	if x, ok := loadCalibration(file, key); ok {
		p.From, p.Source, p.Calibration = x.From, "stored calibration "+file, &x
		return p, nil
	}
	x := cal.MeasureCrossover(&a, p.Size, maxCtx)
	p.From, p.Source, p.Calibration = x.From, "measured", &x
	if file != "" {
		saveCalibration(file, key, x)
	}
	return p, nil
}

// calibrationRecord is a stored calibration.
type calibrationRecord struct {
	Key       string            `json:"key"`
	Measured  time.Time         `json:"measured"`
	Crossover kernels.Crossover `json:"crossover"`
}

// calibrationFile returns the file of key's calibration under dir (default: llmbench/
// calibration under the user's cache directory; "" when there is none).
func calibrationFile(dir, key string) string {
	if dir == "" {
		d, err := os.UserCacheDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(d, "llmbench", "calibration")
	}
	h := fnv.New64a()
	h.Write([]byte(key))
	return filepath.Join(dir, fmt.Sprintf("partitions-%016x.json", h.Sum64()))
}

func loadCalibration(file, key string) (kernels.Crossover, bool) {
	if file == "" {
		return kernels.Crossover{}, false
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return kernels.Crossover{}, false
	}
	var r calibrationRecord
	if json.Unmarshal(b, &r) != nil || r.Key != key || len(r.Crossover.Points) == 0 {
		return kernels.Crossover{}, false
	}
	return r.Crossover, true
}

func saveCalibration(file, key string, x kernels.Crossover) {
	b, err := json.MarshalIndent(calibrationRecord{Key: key, Measured: time.Now().UTC(), Crossover: x}, "", "  ")
	if err != nil || os.MkdirAll(filepath.Dir(file), 0o755) != nil {
		return
	}
	tmp := file + ".tmp" + strconv.Itoa(os.Getpid())
	if os.WriteFile(tmp, b, 0o644) == nil {
		if os.Rename(tmp, file) != nil {
			os.Remove(tmp)
		}
	}
}
