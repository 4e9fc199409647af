package tui

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

	"llmbench/engine"
	"llmbench/engine/builtin"
	"llmbench/engine/synth"
	"llmbench/profiles"
	"llmbench/tui/screens/setup"
	"llmbench/workloads"
	"llmbench/workloads/serving"
)

// ProfileOf is the profile of a Setup config: what `s` on Setup and Results saves,
// and the job a Setup run is (its one run).
func ProfileOf(c setup.Config) profiles.Profile {
	name := c.Describe()
	var p profiles.Profile
	switch c.Kind {
	case setup.Bench:
		p = profiles.FromBench(name, c.BenchSpec())
	case setup.Kernels:
		k := c.Kernel
		k.Cases = slices.Clone(k.Cases)
		p = profiles.Profile{Schema: profiles.SchemaVersion, Name: name, Runs: []profiles.Run{{Name: name, Kernels: &k}}}
	case setup.Batch:
		p = profiles.FromBatch(name, c.BatchSpec())
	case setup.Throughput:
		t := c.ThroughputSpec()
		p = profiles.Profile{Schema: profiles.SchemaVersion, Name: name, Runs: []profiles.Run{{Name: name, Throughput: &t}}}
	default:
		var concs []int
		var rates []workloads.Rate
		if len(c.Concurrency) > 1 || len(c.Rate) > 1 {
			concs = c.Concurrency
			for _, r := range c.Rate {
				rates = append(rates, workloads.Rate(r))
			}
		}
		p = profiles.FromServe(name, ServeSpec(c), concs, rates)
	}
	p.Runs[0].PowerLimitW = slices.Clone(c.PowerW)
	return p
}

// setupWarmups is how many warm-up requests a Setup run sends before every sweep
// point (the job runs them before each point's clock starts), so that the first
// point does not take the cold start alone.
const setupWarmups = 2

// ServeSpec is the serve spec of a Setup config (its first sweep point) over
// serve-bench's defaults, with warm-ups before every point.
func ServeSpec(c setup.Config) workloads.ServeSpec {
	sp := workloads.DefaultServe()
	sp.NumWarmups = setupWarmups
	if len(c.Rate) > 0 {
		sp.RequestRate = workloads.Rate(c.Rate[0])
	}
	if len(c.Concurrency) > 0 {
		sp.MaxConcurrency = c.Concurrency[0]
	}
	d := &sp.Dataset
	d.Name, d.NumPrompts, d.Path = c.Dataset, c.Prompts, c.DatasetPath
	switch c.Dataset {
	case "random":
		d.RandomInputLen, d.RandomOutputLen = c.InputLen, c.OutputLen
	case "sonnet":
		d.SonnetInputLen, d.SonnetOutputLen = c.InputLen, c.OutputLen
		d.SonnetPrefixLen = min(d.SonnetPrefixLen, c.InputLen/2)
	case "sharegpt":
		d.ShareGPTOutputLen = c.OutputLen
	case "prefix_repetition":
		d.PrefixRepetitionOutputLen = c.OutputLen
	case "custom":
		d.CustomOutputLen = c.OutputLen
	}
	switch {
	case c.Remote():
		sp.Backend, sp.BaseURL, sp.Endpoint = c.Backend, strings.TrimRight(c.URL, "/"), cmp.Or(c.Endpoint, serving.DefaultEndpoint(c.Backend))
		sp.Model = c.ServedModel
	case c.Model.Path == setup.Builtin:
		sp.Model = ""
	case c.Model.Shape != "":
		sp.Model, sp.SyntheticType = c.Model.Shape, c.Model.Type
	default:
		sp.Model = c.Model.Path
	}
	if !c.Remote() {
		sp.Threads = c.Threads
		sp.Engine.KVCacheType, sp.Engine.MaxNumSeqs = c.KVType, c.MaxNumSeqs
		if d := c.Draft; d != (workloads.BenchModel{}) {
			e := &sp.Engine
			e.Draft, e.DraftType = d.Path, "" // the built-in model or a file
			if d.Shape != "" {
				e.Draft, e.DraftType = d.Shape, d.Type
			}
			e.DraftMax, e.DraftMin, e.DraftPMin = c.DraftMax, c.DraftMin, c.DraftPMin
		}
	}
	sp.IgnoreEOS = d.Name == "random"
	return sp
}

// errNotSetup is why a profile cannot be loaded into Setup.
var errNotSetup = errors.New("Setup holds one bench (one model, pp, tg, threads), one serve-bench sweep, one batch run, one throughput run or one kernel suite as Setup saves it; llmbench run FILE runs this profile")

// ConfigOf is the Setup config of a profile that holds one run Setup can express
// (ProfileOf's inverse), or a one-line error saying why it cannot.
func ConfigOf(p *profiles.Profile) (setup.Config, error) {
	if len(p.Runs) != 1 {
		return setup.Config{}, errors.New("the profile has several runs: " + errNotSetup.Error())
	}
	r := p.Runs[0]
	var c setup.Config
	if b := r.Bench; b != nil {
		if len(b.Models) != 1 || len(b.Prompt) != 1 || len(b.Gen) != 1 || len(b.Threads) > 1 || len(b.TypeK) > 1 {
			return c, errors.New("the bench lists several values: " + errNotSetup.Error())
		}
		c = setup.Config{Kind: setup.Bench, Model: b.Models[0], Prompt: b.Prompt[0], Gen: b.Gen[0], Reps: b.Reps,
			PowerW: slices.Clone(r.PowerLimitW)}
		if len(b.Threads) == 1 {
			c.Threads = b.Threads[0]
		}
		if len(b.TypeK) == 1 {
			c.KVType = b.TypeK[0]
		}
		if !reflect.DeepEqual(c.BenchSpec().WithDefaults(), b.WithDefaults()) || !setupModel(c.Model) {
			return setup.Config{}, errors.New("the bench sets more than Setup shows: " + errNotSetup.Error())
		}
		return c, nil
	}
	if k := r.Kernels; k != nil {
		c = setup.Config{Kind: setup.Kernels, Kernel: *k, PowerW: slices.Clone(r.PowerLimitW)}
		c.Kernel.Cases = slices.Clone(k.Cases)
		if k.Suite == workloads.SuiteAttentionMasks {
			c.Kernel = c.Kernel.WithDefaults()
		}
		shown := c.Kernel.WithDefaults()
		// Setup shows the suite, cases, threads and repetitions, and the sizes of
		// attention-masks (the window, prefix, documents, batch and seed at their
		// defaults); paged-attention's cases have their own shapes.
		if k.Suite == workloads.SuiteAttentionMasks {
			def := workloads.KernelSpec{Suite: k.Suite, Cases: k.Cases, SeqLen: shown.SeqLen, Heads: shown.Heads, HeadDim: shown.HeadDim,
				BlockSize: shown.BlockSize, Threads: k.Threads, Reps: shown.Reps}.WithDefaults()
			if !reflect.DeepEqual(def, shown) {
				return setup.Config{}, errors.New("the kernels run sets more than Setup shows: " + errNotSetup.Error())
			}
		} else {
			c.Kernel = workloads.KernelSpec{Suite: k.Suite, Cases: c.Kernel.Cases, Threads: k.Threads, Reps: shown.Reps}
		}
		if k.Check {
			return setup.Config{}, errors.New("the kernels run fails on its checks (check: true), which Setup does not show: " + errNotSetup.Error())
		}
		return c, nil
	}
	if b := r.Batch; b != nil {
		c = setup.Config{Kind: setup.Batch, Model: b.Model, SequenceLength: b.SequenceLength, DecodeLength: b.DecodeLength,
			BatchSizes: slices.Clone(b.BatchSize), Reps: b.Runs, Threads: b.Threads, KVType: b.KVType}
		if !reflect.DeepEqual(c.BatchSpec().WithDefaults(), b.WithDefaults()) || !setupModel(c.Model) {
			return setup.Config{}, errors.New("the batch run sets more than Setup shows: " + errNotSetup.Error())
		}
		return c, nil
	}
	if t := r.Throughput; t != nil {
		return throughputConfigOf(r)
	}
	if r.Serve == nil {
		return setup.Config{}, errors.New("the run is not one Setup shows: " + errNotSetup.Error())
	}
	sp := *r.Serve
	d := sp.Dataset
	c = setup.Config{Kind: setup.Serve, Dataset: d.Name, DatasetPath: d.Path, Prompts: d.NumPrompts,
		Concurrency: []int{sp.MaxConcurrency}, Rate: []float64{float64(sp.RequestRate)},
		Threads: sp.Threads, KVType: sp.Engine.KVCacheType, MaxNumSeqs: sp.Engine.MaxNumSeqs, PowerW: slices.Clone(r.PowerLimitW)}
	if r.Sweep != nil {
		if len(r.Sweep.MaxConcurrency) > 0 {
			c.Concurrency = slices.Clone(r.Sweep.MaxConcurrency)
		}
		if len(r.Sweep.RequestRate) > 0 {
			c.Rate = nil
			for _, v := range r.Sweep.RequestRate {
				c.Rate = append(c.Rate, float64(v))
			}
		}
	}
	switch d.Name {
	case "random":
		c.InputLen, c.OutputLen = d.RandomInputLen, d.RandomOutputLen
	case "sonnet":
		c.InputLen, c.OutputLen = d.SonnetInputLen, d.SonnetOutputLen
	case "sharegpt":
		c.OutputLen = d.ShareGPTOutputLen
	case "prefix_repetition":
		c.OutputLen = d.PrefixRepetitionOutputLen
	case "custom":
		c.OutputLen = d.CustomOutputLen
	}
	switch {
	case sp.Backend != "inproc":
		c.Backend, c.URL, c.Endpoint, c.ServedModel = sp.Backend, sp.BaseURL, sp.Endpoint, sp.Model
	case sp.Model == "":
		c.Model.Path = setup.Builtin
	case slices.Contains(synth.Shapes(), sp.Model):
		c.Model.Shape, c.Model.Type = sp.Model, sp.SyntheticType
	default:
		c.Model.Path = sp.Model
	}
	if sp.Backend == "inproc" && sp.Engine.Draft != "" {
		var err error
		if c, err = draftConfig(c, sp); err != nil {
			return setup.Config{}, err
		}
		// the same draft and settings, as Setup writes them (defaults filled, the
		// draft's type named)
		shown := ServeSpec(c).Engine
		e := &sp.Engine
		e.Draft, e.DraftType, e.DraftMax, e.DraftMin, e.DraftPMin = shown.Draft, shown.DraftType, shown.DraftMax, shown.DraftMin, shown.DraftPMin
	}
	back := ProfileOf(c).Runs[0]
	if !reflect.DeepEqual(ServeSpec(c), *back.Serve) || !reflect.DeepEqual(back.Sweep, r.Sweep) && (r.Sweep != nil || back.Sweep != nil) ||
		!reflect.DeepEqual(ServeSpec(c), sp) || (!c.Remote() && !setupModel(c.Model)) || slices.ContainsFunc(c.Rate, math.IsNaN) {
		return setup.Config{}, errors.New("the serve run sets more than Setup shows: " + errNotSetup.Error())
	}
	return c, nil
}

// draftConfig is c with the draft of sp's engine as Setup shows it: the built-in
// model, a pair's draft shape in its type (the model's synthetic type when the
// profile names none) or a file, and the settings with the engine's defaults filled
// in; a draft Setup does not offer is refused in one line.
func draftConfig(c setup.Config, sp workloads.ServeSpec) (setup.Config, error) {
	e := sp.Engine
	id, typ := e.Draft, cmp.Or(e.DraftType, sp.SyntheticType)
	if rest, ok := strings.CutPrefix(id, "synth:"); ok { // synth:SHAPE:TYPE
		id, typ, _ = strings.Cut(rest, ":")
	}
	switch sh, err := synth.Lookup(id); {
	case id == setup.Builtin || id == builtin.Name:
		c.Draft.Path = setup.Builtin
	case err == nil && sh.DraftOf == "":
		return c, fmt.Errorf("the draft %s is a synthetic shape Setup does not offer as a draft (it offers %s): %s",
			id, strings.Join(setup.DraftShapes(), ", "), errNotSetup)
	case err == nil:
		c.Draft = workloads.BenchModel{Shape: sh.Name, Type: typ}
	case e.DraftType != "":
		return c, fmt.Errorf("the draft %s is a file, whose draft_type %s Setup does not show: %s", id, e.DraftType, errNotSetup)
	default:
		c.Draft.Path = id
	}
	if !setupModel(c.Draft) {
		return c, fmt.Errorf("the draft %s %s is not one Setup shows: %s", id, typ, errNotSetup)
	}
	c.DraftMax, c.DraftMin, c.DraftPMin = cmp.Or(e.DraftMax, engine.DefaultDraftMax), e.DraftMin, cmp.Or(e.DraftPMin, engine.DefaultDraftPMin)
	if c.DraftPMin < 0 {
		c.DraftPMin = -1 // never stop early, whatever the negative number
	}
	return c, nil
}

// setupModel reports whether Setup offers m: the built-in model, a synthetic shape
// and type it lists, or a file path.
func setupModel(m workloads.BenchModel) bool {
	if m.Shape == "" {
		return m.Path != ""
	}
	return m.Path == "" && slices.Contains(synth.Shapes(), m.Shape) && slices.Contains(synth.FileTypes(), m.Type)
}

// throughputConfigOf is the Setup config of a profile's throughput run, or why Setup
// cannot show it: a KV cache type per row, a seed, power limits, or a model named as
// synth:SHAPE:TYPE (Setup writes a shape in BF16).
func throughputConfigOf(r profiles.Run) (setup.Config, error) {
	t := *r.Throughput
	c := setup.Config{Kind: setup.Throughput, WeightsTypes: slices.Clone(t.WeightsTypes), BatchSize: t.BatchSize,
		MaxCacheLength: t.MaxCacheLength, MaxInputLength: t.MaxInputLength, MaxOutputLength: t.MaxOutputLength,
		Prompts: t.NumPrompts, DatasetPath: t.DatasetPath, Threads: t.Threads}
	if len(t.KVCacheTypes) == 1 {
		c.KVType = t.KVCacheTypes[0]
	}
	switch {
	case t.Model == "" || t.Model == workloads.BuiltinModel:
		c.Model.Path = setup.Builtin
	case slices.Contains(synth.Shapes(), t.Model):
		c.Model = workloads.BenchModel{Shape: t.Model, Type: "BF16"}
	default:
		c.Model.Path = t.Model
	}
	back := ProfileOf(c).Runs[0].Throughput
	if t.Model == "" {
		t.Model = workloads.BuiltinModel
	}
	if !reflect.DeepEqual(*back, t) || len(r.PowerLimitW) > 0 || strings.HasPrefix(t.Model, "synth:") {
		return setup.Config{}, errors.New("the throughput run sets more than Setup shows: " + errNotSetup.Error())
	}
	return c, nil
}

// ThroughputRows names the rows of a throughput job as its Live screen shows them
// (setup.ThroughputRowNames); nil for any other job.
func ThroughputRows(j workloads.Job) []string {
	if j.Throughput == nil {
		return nil
	}
	return setup.ThroughputRowNames(*j.Throughput)
}
