package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestVsLlamacppTable runs scripts/vs-llamacpp.sh against scripted llmbench and
// llama-bench stand-ins (three rounds, two types, known t/s per round) and checks the
// table: medians, their ratio, the range of the rounds' own ratios, and which lines
// fail, with the note where the rounds disagree.
func TestVsLlamacppTable(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"scripts/vs-llamacpp.sh", "scripts/ab-lib.sh"} {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dir, name), string(b))
	}
	// Each stand-in counts its calls per type and prints round r's pp and tg t/s.
	fake := func(typeOf, pp, tg string) string {
		return `#!/usr/bin/env bash
ty=""
while [ $# -gt 0 ]; do
  case $1 in --type) ty=$2 ;; -m) ty=$(basename "$2" .gguf) ;; esac
  shift
done
f="` + dir + `/count.` + typeOf + `.$ty"
r=$(( $(cat "$f" 2>/dev/null || echo 0) + 1 ))
echo $r >"$f"
declare -A pp=(` + pp + `) tg=(` + tg + `)
row() { echo "{\"model_filename\": \"/m/$ty.gguf\", \"n_threads\": 2, \"n_prompt\": $1, \"n_gen\": $2, \"avg_ts\": $3}"; }
row 8 0 ${pp[$ty.$r]}
row 0 4 ${tg[$ty.$r]}
`
	}
	write(t, filepath.Join(dir, "bin/llmbench"), fake("ours",
		"[Q4_0.1]=100 [Q4_0.2]=110 [Q4_0.3]=120 [F16.1]=90 [F16.2]=90 [F16.3]=90",
		"[Q4_0.1]=50 [Q4_0.2]=40 [Q4_0.3]=45 [F16.1]=20 [F16.2]=20 [F16.3]=20"))
	write(t, filepath.Join(dir, "llama-bench"), fake("theirs",
		"[Q4_0.1]=50 [Q4_0.2]=50 [Q4_0.3]=50 [F16.1]=100 [F16.2]=100 [F16.3]=100",
		"[Q4_0.1]=40 [Q4_0.2]=50 [Q4_0.3]=44 [F16.1]=25 [F16.2]=16 [F16.3]=22"))
	cmd := exec.Command("bash", filepath.Join(dir, "scripts/vs-llamacpp.sh"))
	cmd.Env = append(os.Environ(), "LLAMA_BENCH="+filepath.Join(dir, "llama-bench"),
		"TYPES=Q4_0,F16", "ROUNDS=3", "P=8", "N=4", "LLMBENCH_CPU=")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Errorf("want exit status 1 (F16 under llama.cpp), got success:\n%s", out)
	}
	want := []string{
		"Q4_0     pp8        110.00      50.00   2.20x  2.00-2.40x\n",
		"Q4_0     tg4         45.00      44.00   1.02x  0.80-1.25x\n",
		"F16      pp8         90.00     100.00   0.90x  0.90-0.90x  FAIL: under llama.cpp\n",
		"F16      tg4         20.00      22.00   0.91x  0.80-1.25x  FAIL: under llama.cpp (rounds disagree: within this machine's noise)\n",
	}
	for _, w := range want {
		if !strings.Contains(string(out), w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
}

// write creates path (and its directories) holding body, executable.
func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
}
