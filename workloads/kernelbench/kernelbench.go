// Package kernelbench holds the kernel benchmark suites of `llmbench kernels`: the
// attention-mask variants the way attention-gym compares them (fused causal, dense +
// mask and block-sparse attention, forward and backward, with the block-mask picture)
// and paged attention with and without partitions. A suite runs on the CPU backend
// with no model and returns a Report: the sections it prints (a title, text exactly
// as printed, the table as data), the acceptance checks it made, and its typed
// results as JSON.
//
// A suite plugs in with a Suite value in the suites table (see suites below): a
// name, a line of description and a Run function.
package kernelbench

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"llmbench/workloads"
)

// Report is what one suite run measured, as the store keeps it and every exporter
// reads it.
type Report struct {
	// Spec is the spec the suite ran, defaults filled.
	Spec workloads.KernelSpec `json:"spec"`
	// Sections are the printed parts, in order (one per mask, one table, ...).
	Sections []Section `json:"sections"`
	// Checks are the acceptance checks the suite made (empty when it made none).
	Checks []Check `json:"checks,omitempty"`
	// Notes are lines printed after the sections (sizes, FLOP formula, thread count).
	Notes []string `json:"notes,omitempty"`
	// Data is the suite's typed results (attention-masks: []MaskResult;
	// paged-attention: PagedReport).
	Data json.RawMessage `json:"data,omitempty"`
	// Partial is set when the run stopped before every case finished.
	Partial bool `json:"partial,omitempty"`
}

// Section is one printed part of a report.
type Section struct {
	// Title is the section's name ("Causal Mask"); the text shows it in a box.
	Title string `json:"title"`
	// Text is the section exactly as printed on a terminal.
	Text string `json:"text"`
	// Table is the section's table as data (CSV and HTML read it); nil when none.
	Table *Table `json:"table,omitempty"`
}

// Table is a table of text cells; Numeric marks the right-aligned columns.
type Table struct {
	Columns []string   `json:"columns"`
	Numeric []bool     `json:"numeric,omitempty"`
	Rows    [][]string `json:"rows"`
}

// Check is one acceptance check: what was compared, whether it passed, the figures.
type Check struct {
	Name   string `json:"name"`
	Pass   bool   `json:"pass"`
	Detail string `json:"detail"`
}

// Failed returns the checks that did not pass.
func (r *Report) Failed() []Check {
	var out []Check
	for _, c := range r.Checks {
		if !c.Pass {
			out = append(out, c)
		}
	}
	return out
}

// Headline is the report's one-line summary for a history list.
func (r *Report) Headline() string {
	s := fmt.Sprintf("%d sections", len(r.Sections))
	if len(r.Checks) > 0 {
		s += fmt.Sprintf(" · checks %d/%d passed", len(r.Checks)-len(r.Failed()), len(r.Checks))
	}
	return s
}

// Event is what a suite tells its caller while it runs: Done of Total steps finished
// (Case names the one running now), what the steps are (Unit), and each section once
// it is complete.
type Event struct {
	Done, Total int
	// Unit is what Done and Total count: "rounds" (attention-masks: each mask's warmup
	// and timed rounds) or "cases" (paged-attention; "" means cases too).
	Unit    string
	Case    string
	Section *Section
}

// Observer receives a suite's events; it must not block.
type Observer func(Event)

// Suite is one kernel benchmark suite.
type Suite struct {
	Name, Description string
	// Run runs the suite on spec (defaults filled) and reports through obs (never
	// nil). Interrupted, it returns what it measured (Partial) with ctx's error.
	Run func(ctx context.Context, spec workloads.KernelSpec, obs Observer) (*Report, error)
}

// suites are the suites by name. A new suite adds one entry here.
var suites = []Suite{
	{Name: workloads.SuiteAttentionMasks, Description: "attention-gym's mask comparison: fused causal, dense + mask and block-sparse attention, forward and backward", Run: runAttentionMasks},
	{Name: workloads.SuitePagedAttention, Description: "vllm-metal's paged-attention comparison: partitioned vs one-pass decode and varlen prefill, and the automatic choice", Run: runPagedSuite},
}

// Suites lists the suites this build runs.
func Suites() []Suite { return slices.Clone(suites) }

// Lookup returns the suite named name.
func Lookup(name string) (Suite, error) {
	for _, s := range suites {
		if s.Name == name {
			return s, nil
		}
	}
	var names []string
	for _, s := range suites {
		names = append(names, s.Name)
	}
	return Suite{}, fmt.Errorf("kernels: no suite %q in this build (%s)", name, strings.Join(names, ", "))
}

// CaseNames lists the cases of the suite named suite, in its order (attention-masks:
// the mask names; paged-attention: the case names); nil for no such suite.
func CaseNames(suite string) []string {
	var names []string
	switch suite {
	case workloads.SuiteAttentionMasks:
		for _, m := range masks {
			names = append(names, m.Name)
		}
	case workloads.SuitePagedAttention:
		for _, c := range pagedCases {
			names = append(names, c.Name)
		}
	}
	return names
}

// Validate says why spec cannot run, before anything runs.
func Validate(spec workloads.KernelSpec) error {
	spec = spec.WithDefaults()
	if err := spec.Validate(); err != nil {
		return err
	}
	if _, err := Lookup(spec.Suite); err != nil {
		return fmt.Errorf("--suite: %w", err)
	}
	for _, c := range spec.Cases {
		switch spec.Suite {
		case workloads.SuiteAttentionMasks:
			if _, err := maskByName(c); err != nil {
				return fmt.Errorf("--cases: %w", err)
			}
		case workloads.SuitePagedAttention:
			if names := CaseNames(spec.Suite); !slices.Contains(names, c) {
				return fmt.Errorf("--cases: no paged-attention case %q (cases: %s)", c, strings.Join(names, ", "))
			}
		}
	}
	return nil
}

// Run runs the suite spec names.
func Run(ctx context.Context, spec workloads.KernelSpec, obs Observer) (*Report, error) {
	if err := Validate(spec); err != nil {
		return nil, err
	}
	s, _ := Lookup(spec.Suite)
	if obs == nil {
		obs = func(Event) {}
	}
	return s.Run(ctx, spec.WithDefaults(), obs)
}

// Text returns the report as printed on a terminal: every section, then the notes
// and the checks.
func (r *Report) Text() string {
	var b strings.Builder
	for _, s := range r.Sections {
		b.WriteString(s.Text)
	}
	b.WriteString(r.Trailer())
	return b.String()
}

// Trailer is what follows the sections: the notes, then one line per check.
func (r *Report) Trailer() string {
	var b strings.Builder
	for _, n := range r.Notes {
		b.WriteString(n + "\n")
	}
	for _, c := range r.Checks {
		mark := "PASS"
		if !c.Pass {
			mark = "FAIL"
		}
		fmt.Fprintf(&b, "check %s: %s: %s\n", mark, c.Name, c.Detail)
	}
	return b.String()
}
