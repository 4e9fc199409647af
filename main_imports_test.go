package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportCheck runs scripts/check-imports.sh on small modules named llmbench: it
// passes a clean layout and fails on each rule broken and on a go list error (which
// the first version of the script read as "ok").
func TestImportCheck(t *testing.T) {
	script, err := os.ReadFile("scripts/check-imports.sh")
	if err != nil {
		t.Fatal(err)
	}
	base := map[string]string{
		"go.mod":                 "module llmbench\n\ngo 1.22\n",
		"main.go":                "package main\n\nimport _ \"llmbench/workloads/jobs\"\n\nfunc main() {}\n",
		"kernels/k.go":           "package kernels\n",
		"engine/e.go":            "package engine\n\nimport _ \"llmbench/kernels\"\n",
		"workloads/jobs/j.go":    "package jobs\n\nimport _ \"llmbench/engine\"\nimport _ \"llmbench/workloads/serving\"\n",
		"workloads/serving/s.go": "package serving\n",
		"profiles/p.go":          "package profiles\n\nimport _ \"llmbench/workloads/jobs\"\n",
		"tui/t.go":               "package tui\n\nimport _ \"llmbench/profiles\"\n",
		"profiles/leaf/l.go":     "package leaf\n",
	}
	cases := []struct {
		name   string
		change map[string]string
		want   string // "" = passes
	}{
		{"clean", nil, ""},
		{"kernels imports workloads", map[string]string{"kernels/k.go": "package kernels\n\nimport _ \"llmbench/workloads/serving\"\n"}, "kernels must not import"},
		{"workloads imports profiles", map[string]string{"workloads/serving/s.go": "package serving\n\nimport _ \"llmbench/profiles/leaf\"\n"}, "workloads must not import"},
		{"main imports serving", map[string]string{"main.go": "package main\n\nimport _ \"llmbench/workloads/serving\"\n\nfunc main() {}\n"}, "package main imports llmbench/workloads/serving directly"},
		{"go list fails", map[string]string{"engine/e.go": "package engine\n\nimport _ \"llmbench/nonexistent\"\n"}, "go list"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			files := map[string]string{"scripts/check-imports.sh": string(script)}
			for k, v := range base {
				files[k] = v
			}
			for k, v := range c.change {
				files[k] = v
			}
			for name, body := range files {
				write(t, filepath.Join(dir, name), body)
			}
			cmd := exec.Command("bash", filepath.Join(dir, "scripts/check-imports.sh"))
			cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
			out, err := cmd.CombinedOutput()
			switch {
			case c.want == "" && (err != nil || !strings.Contains(string(out), "import rules: ok")):
				t.Errorf("clean layout: %v\n%s", err, out)
			case c.want != "" && (err == nil || !strings.Contains(string(out), c.want)):
				t.Errorf("want a failure naming %q, got %v:\n%s", c.want, err, out)
			}
		})
	}
}
