package tui

import (
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"

	"llmbench/engine/synth"
	"llmbench/profiles"
	"llmbench/tui/screens/setup"
	"llmbench/workloads"
	"llmbench/workloads/serving"
)

// ProfileOf is the profile of a Setup config: what `s` on Setup and Results saves.
func ProfileOf(c setup.Config) profiles.Profile {
	name := c.Describe()
	if c.Kind == setup.Bench {
		return profiles.FromBench(name, c.BenchSpec())
	}
	return profiles.FromServe(name, ServeSpec(c), nil, nil)
}

// ServeSpec is the serve spec of a Setup config and its dataset, over serve-bench's
// defaults (shorter random prompts, so a run on the CPU is quick).
func ServeSpec(c setup.Config) workloads.ServeSpec {
	sp := workloads.DefaultServe()
	sp.RequestRate, sp.MaxConcurrency = workloads.Rate(c.Rate), c.Concurrency
	d := &sp.Dataset
	d.Name, d.NumPrompts, d.RandomInputLen, d.RandomOutputLen = c.Dataset, c.Prompts, 128, 64
	switch {
	case c.URL != "":
		sp.Backend, sp.BaseURL, sp.Endpoint = "openai", strings.TrimRight(c.URL, "/"), serving.DefaultEndpoint("openai")
	case c.Model.Path == setup.Builtin:
		sp.Model = ""
	case c.Model.Shape != "":
		sp.Model, sp.SyntheticType = c.Model.Shape, c.Model.Type
	default:
		sp.Model = c.Model.Path
	}
	if d.Name == "sonnet" {
		d.Path = "sonnet.txt" // vLLM's benchmarks/sonnet.txt, from the current folder
	}
	sp.IgnoreEOS = d.Name == "random"
	return sp
}

// errNotSetup is why a profile cannot be loaded into Setup.
var errNotSetup = errors.New("Setup holds one bench (one model, pp, tg, threads) or one serve-bench point as Setup saves it; llmbench run FILE runs this profile")

// ConfigOf is the Setup config of a profile that holds one run Setup can express
// (ProfileOf's inverse), or a one-line error saying why it cannot.
func ConfigOf(p *profiles.Profile) (setup.Config, error) {
	if len(p.Runs) != 1 {
		return setup.Config{}, errors.New("the profile has several runs: " + errNotSetup.Error())
	}
	r := p.Runs[0]
	if len(r.PowerLimitW) > 0 {
		return setup.Config{}, errors.New("the profile sets power limits: " + errNotSetup.Error())
	}
	var c setup.Config
	if b := r.Bench; b != nil {
		if len(b.Models) != 1 || len(b.Prompt) != 1 || len(b.Gen) != 1 || len(b.Threads) > 1 {
			return c, errors.New("the bench lists several values: " + errNotSetup.Error())
		}
		c = setup.Config{Kind: setup.Bench, Model: b.Models[0], Prompt: b.Prompt[0], Gen: b.Gen[0], Reps: b.Reps}
		if len(b.Threads) == 1 {
			c.Threads = b.Threads[0]
		}
		if !reflect.DeepEqual(c.BenchSpec().WithDefaults(), b.WithDefaults()) || !setupModel(c.Model) {
			return setup.Config{}, errors.New("the bench sets more than Setup shows: " + errNotSetup.Error())
		}
		return c, nil
	}
	points := r.Points()
	if len(points) != 1 {
		return c, errors.New("the profile sweeps several points: " + errNotSetup.Error())
	}
	sp := points[0]
	c = setup.Config{Kind: setup.Serve, Dataset: sp.Dataset.Name, Prompts: sp.Dataset.NumPrompts,
		Concurrency: sp.MaxConcurrency, Rate: float64(sp.RequestRate)}
	switch {
	case sp.Backend == "openai":
		c.URL, c.Model.Path = sp.BaseURL, setup.Builtin
	case sp.Model == "":
		c.Model.Path = setup.Builtin
	case slices.Contains(synth.Shapes(), sp.Model):
		c.Model.Shape, c.Model.Type = sp.Model, sp.SyntheticType
	default:
		c.Model.Path = sp.Model
	}
	if !reflect.DeepEqual(ServeSpec(c), sp) || !setupModel(c.Model) || math.IsNaN(c.Rate) {
		return setup.Config{}, errors.New("the serve run sets more than Setup shows: " + errNotSetup.Error())
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
