package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"llmbench/workloads"
	"llmbench/workloads/micro"
	"llmbench/workloads/result"
	"llmbench/workloads/serving"
	"llmbench/workloads/telemetry"
)

// energyResult is a two-point power sweep of pp and tg, the GPU's energy measured
// (NVML) or, beside a CPU engine, the CPU's energy unreadable.
func energyResult(known bool) *micro.Result {
	res := &micro.Result{Spec: workloads.BenchSpec{}.WithDefaults(), TelemetryNote: "NVML found no GPU"}
	for _, w := range []float64{600, 300} {
		for _, tc := range []struct{ p, n int }{{512, 0}, {0, 128}} {
			r := micro.Record{ModelType: "llama 1B Q4_0", NThreads: 2, NPrompt: tc.p, NGen: tc.n, SamplesNs: []uint64{1e9, 1e9}, PowerLimitW: w}
			if known {
				r.Telemetry = &telemetry.Power{Device: "gpu:0", Source: "nvml", GPUSource: "nvml", Samples: 20, Seconds: 2, MinW: w - 10, MeanW: w - 5, MaxW: w, EnergyJ: 2 * (w - 5), TempMaxC: 70}
			} else {
				r.Telemetry = &telemetry.Power{Device: "cpu", Note: "RAPL: no powercap zones", Samples: 20, Seconds: 2}
			}
			res.Records = append(res.Records, r)
		}
	}
	return res
}

func TestLlamaBenchEnergy(t *testing.T) {
	cases := []struct {
		name  string
		known bool
		want  []string
		not   []string
	}{
		{"energy known", true, []string{"|   power |", "GPU 0 W |", "GPU 0 t/J |", "|   600 W |", "tokens/s vs watts", "tokens/J vs watts (measured", "(100%)",
			"energy: GPU 0, real readings (NVML)"}, []string{"energy: not measured", "FAKE"}},
		{"energy unknown", false, []string{"|   power |", "tokens/J vs watts: energy not measured",
			"energy: not measured: CPU package (RAPL: no powercap zones)", "telemetry: NVML found no GPU"}, []string{"t/J |"}},
	}
	for _, c := range cases {
		var b bytes.Buffer
		if err := LlamaBenchMarkdown(&b, energyResult(c.known)); err != nil {
			t.Fatal(err)
		}
		md := b.String()
		for _, w := range c.want {
			if !strings.Contains(md, w) && !strings.Contains(strings.ReplaceAll(md, "  ", " "), w) {
				t.Errorf("%s: no %q in\n%s", c.name, w, md)
			}
		}
		for _, w := range c.not {
			if strings.Contains(md, w) {
				t.Errorf("%s: %q in\n%s", c.name, w, md)
			}
		}
	}
}

func TestLlamaBenchEnergyFormats(t *testing.T) {
	for _, known := range []bool{true, false} {
		res := energyResult(known)
		var j bytes.Buffer
		LlamaBenchJSON(&j, res)
		var tests []map[string]any
		if err := json.Unmarshal(j.Bytes(), &tests); err != nil {
			t.Fatal(err)
		}
		tj, jot := tests[1]["tokens_per_joule"], tests[1]["joules_per_output_token"]
		if known && (tj.(float64) != 256/1190.0 || jot.(float64) != 1190/256.0 || tests[0]["joules_per_output_token"] != nil || tests[0]["power_limit_w"] != 600.0) {
			t.Errorf("json: t/J %v J/out %v %v", tj, jot, tests[0])
		}
		if !known && (tj != nil || jot != nil || tests[0]["energy_j"] != nil || tests[0]["telemetry_samples"] != 20.0) {
			t.Errorf("unknown energy in json: %v", tests[0])
		}
		var c, s bytes.Buffer
		LlamaBenchCSV(&c, res)
		LlamaBenchSQL(&s, res)
		head := strings.SplitN(c.String(), "\n", 2)[0]
		if !strings.Contains(head, "energy_j,tokens_per_joule,joules_per_output_token") || !strings.Contains(s.String(), "energy_j REAL") {
			t.Errorf("csv/sql columns:\n%s", head)
		}
		if !known && (!strings.Contains(c.String(), `""`) || !strings.Contains(s.String(), "NULL")) {
			t.Errorf("unknown energy: csv/sql not empty/NULL")
		}
	}
}

func TestVLLMEnergy(t *testing.T) {
	res := &serving.Result{PowerLimitW: 450, Telemetry: &telemetry.Power{Device: "gpu:0", Source: "nvml", Seconds: 2, MinW: 400, MeanW: 420, MaxW: 440, EnergyJ: 840}}
	res.Summary.TotalOutput = 420
	var b bytes.Buffer
	if err := VLLMJSON(&b, res, VLLMJSONOptions{}); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(b.Bytes(), &m)
	if m["energy_j"] != 840.0 || m["output_tokens_per_joule"] != 0.5 || m["joules_per_output_token"] != 2.0 || m["power_limit_w"] != 450.0 || m["power_mean_w"] != 420.0 {
		t.Errorf("vLLM JSON energy: %v %v %v %v", m["energy_j"], m["output_tokens_per_joule"], m["joules_per_output_token"], m["power_limit_w"])
	}
	b.Reset()
	VLLMExtras(&b, res)
	if !strings.Contains(b.String(), "Output tokens per joule:") || !strings.Contains(b.String(), "Power limit (W):") {
		t.Errorf("extras:\n%s", b.String())
	}
	b.Reset()
	VLLMJSON(&b, &serving.Result{}, VLLMJSONOptions{})
	m = nil
	json.Unmarshal(b.Bytes(), &m)
	if v, ok := m["energy_j"]; !ok || v != nil {
		t.Errorf("unmeasured energy_j = %v (present %v); want null", v, ok)
	}
	b.Reset()
	VLLMSweepTable(&b, []*serving.Result{res})
	if !strings.Contains(b.String(), "450 W") || !strings.Contains(b.String(), "tok/J") {
		t.Errorf("sweep table:\n%s", b.String())
	}
}

// TestFakeSaysFake: readings of the fake device say so in every output, whether the
// fake GPU is the energy device (serve-bench --energy-device gpu:0) or only sampled
// beside the CPU engine, whose energy it never lends.
func TestFakeSaysFake(t *testing.T) {
	// bench: a fake GPU beside the CPU engine, RAPL unreadable: no number, and fake.
	res := energyResult(false)
	res.TelemetryNote = "GPUs sampled"
	for i := range res.Records {
		res.Records[i].Telemetry.GPUSource = "fake"
	}
	var md, js, html bytes.Buffer
	LlamaBenchMarkdown(&md, res)
	if !strings.Contains(md.String(), "telemetry: the GPU readings are FAKE") || strings.Contains(md.String(), "t/J |") {
		t.Errorf("md:\n%s", md.String())
	}
	LlamaBenchJSON(&js, res)
	var tests []map[string]any
	json.Unmarshal(js.Bytes(), &tests)
	if tests[0]["gpu_source"] != "fake" || tests[0]["energy_device"] != "cpu" || tests[0]["power_source"] != nil || tests[0]["energy_j"] != nil ||
		tests[0]["energy_note"] != "RAPL: no powercap zones" {
		t.Errorf("json: %v", tests[0])
	}
	DocumentHTML(&html, result.Document{Bench: res})
	if !strings.Contains(html.String(), "FAKE") {
		t.Error("html says nothing of fake")
	}
	// bench with the fake GPU as the energy device: the heads say FAKE.
	res = energyResult(true)
	for i := range res.Records {
		tp := res.Records[i].Telemetry
		tp.Source, tp.GPUSource = "fake", "fake"
	}
	md.Reset()
	LlamaBenchMarkdown(&md, res)
	if !strings.Contains(md.String(), "FAKE GPU 0 t/J |") || !strings.Contains(md.String(), "energy: GPU 0, FAKE readings") {
		t.Errorf("md:\n%s", md.String())
	}
	// serve-bench: the vLLM block, its JSON and the HTML page.
	sr := &serving.Result{Telemetry: &telemetry.Power{Device: "gpu:0", Source: "fake", GPUSource: "fake", Seconds: 2, MinW: 400, MeanW: 420, MaxW: 440, EnergyJ: 840}}
	sr.Summary.TotalOutput = 420
	var ex, vj bytes.Buffer
	VLLMExtras(&ex, sr)
	if !strings.Contains(ex.String(), "Energy device:                           GPU 0, FAKE readings") {
		t.Errorf("extras:\n%s", ex.String())
	}
	VLLMJSON(&vj, sr, VLLMJSONOptions{})
	var m map[string]any
	json.Unmarshal(vj.Bytes(), &m)
	if m["power_source"] != "fake" || m["energy_device"] != "gpu:0" || m["energy_j"] != 840.0 {
		t.Errorf("vLLM JSON: %v %v %v", m["power_source"], m["energy_device"], m["energy_j"])
	}
	html.Reset()
	DocumentHTML(&html, result.Document{Serving: []*serving.Result{sr}})
	if !strings.Contains(html.String(), "FAKE readings") {
		t.Error("serving html says nothing of fake")
	}
	// A fake GPU beside an inproc run (energy from the CPU): the block says so.
	sr.Telemetry = &telemetry.Power{Device: "cpu", GPUSource: "fake", Note: "RAPL: no powercap zones"}
	ex.Reset()
	VLLMExtras(&ex, sr)
	if !strings.Contains(ex.String(), "not measured: CPU package") || !strings.Contains(ex.String(), "GPU readings are FAKE") || strings.Contains(ex.String(), "Energy (J)") {
		t.Errorf("extras:\n%s", ex.String())
	}
}
