package main

import (
	"context"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"llmbench/engine"
	"llmbench/engine/builtin"
	"llmbench/engine/server"
)

// compatRow is one row of a docs/COMPATIBILITY.md table: the backticked names of its
// first cell, its status (empty in the additions tables) and its notes.
type compatRow struct {
	names  []string
	status string
}

// compatTables reads docs/COMPATIBILITY.md's tables by section title.
func compatTables(t *testing.T) map[string][]compatRow {
	t.Helper()
	raw, err := os.ReadFile("docs/COMPATIBILITY.md")
	if err != nil {
		t.Fatal(err)
	}
	tables := map[string][]compatRow{}
	section := ""
	tick := regexp.MustCompile("`([^`]+)`")
	for _, line := range strings.Split(string(raw), "\n") {
		if title, ok := strings.CutPrefix(line, "## "); ok {
			section = title
			continue
		}
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "|---") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		first := strings.TrimSpace(cells[0])
		if first == "flag" || first == "endpoint" {
			continue // header
		}
		r := compatRow{}
		for _, m := range tick.FindAllStringSubmatch(first, -1) {
			r.names = append(r.names, m[1])
		}
		if len(cells) == 3 {
			r.status = strings.TrimSpace(cells[1])
		}
		if len(r.names) == 0 {
			t.Fatalf("%s: row without a backticked name: %s", section, line)
		}
		tables[section] = append(tables[section], r)
	}
	return tables
}

const (
	statusWorks    = "works"
	statusNoEffect = "accepted, no effect"
	statusNA       = "not applicable"
)

// checkFlagTable checks a command's upstream table and its additions table against
// the flags fs registers: every listed flag is registered, every registered flag is
// listed, and the statuses agree with noEffect and refused (nil: not checked).
func checkFlagTable(t *testing.T, cmd string, upstream, additions []compatRow, fs *flag.FlagSet, noEffect, refused map[string]bool) {
	t.Helper()
	listed := map[string]string{}
	for _, rows := range [][]compatRow{upstream, additions} {
		for _, r := range rows {
			for _, n := range r.names {
				name := strings.TrimLeft(n, "-")
				if _, dup := listed[name]; dup {
					t.Errorf("%s: %s listed twice", cmd, n)
				}
				listed[name] = r.status
				if name == "h" || name == "help" {
					continue // the flag package's own
				}
				if fs.Lookup(name) == nil {
					t.Errorf("%s: the doc lists %s, which the command does not register", cmd, n)
				}
			}
		}
	}
	for _, r := range additions {
		if r.status != "" {
			t.Errorf("%s additions: %v has a status", cmd, r.names)
		}
	}
	fs.VisitAll(func(f *flag.Flag) {
		if _, ok := listed[f.Name]; !ok {
			t.Errorf("%s registers -%s, which docs/COMPATIBILITY.md does not list (add a row: upstream table or llmbench additions)", cmd, f.Name)
		}
	})
	for _, r := range upstream {
		switch r.status {
		case statusWorks, statusNoEffect, statusNA:
		default:
			t.Errorf("%s: %v: status %q is not works, %q or %q", cmd, r.names, r.status, statusNoEffect, statusNA)
		}
		for _, n := range r.names {
			name := strings.TrimLeft(n, "-")
			if noEffect != nil && (r.status == statusNoEffect) != noEffect[name] {
				t.Errorf("%s: %s is %q in the doc; in the command's list of flags with no effect: %v", cmd, n, r.status, noEffect[name])
			}
			if refused != nil && (r.status == statusNA) != refused[name] {
				t.Errorf("%s: %s is %q in the doc; refused by the command: %v", cmd, n, r.status, refused[name])
			}
		}
	}
}

func setOf(names ...[]string) map[string]bool {
	m := map[string]bool{}
	for _, ns := range names {
		for _, n := range ns {
			m[n] = true
		}
	}
	return m
}

// TestCompatibilityDoc keeps docs/COMPATIBILITY.md and the commands in step: flags
// both ways with their statuses, and the endpoints against a running server.
func TestCompatibilityDoc(t *testing.T) {
	tables := compatTables(t)
	lb, lbAdd := tables["llama-bench flags"], tables["llmbench additions to bench"]
	vl, vlAdd := tables["vllm bench serve flags"], tables["llmbench additions to serve-bench"]
	eps := tables["OpenAI API endpoints of `llmbench serve`"]
	if len(lb) < 40 || len(lbAdd) == 0 || len(vl) < 50 || len(vlAdd) == 0 || len(eps) < 10 {
		t.Fatalf("tables missing or short: %d %d %d %d %d rows", len(lb), len(lbAdd), len(vl), len(vlAdd), len(eps))
	}

	bfs := flag.NewFlagSet("bench", flag.ContinueOnError)
	defineBench(bfs)
	// llama-bench: the GPU flags and the download settings with nothing to download
	// have no effect; -hf/-hff and -dio (1) are refused.
	lbNoEffect := setOf(gpuOnlyFlags, []string{"cpu-strict", "hft", "hf-token", "offline"})
	checkFlagTable(t, "bench", lb, lbAdd, bfs, lbNoEffect, nil)
	for _, n := range []string{"hf", "hfr", "hf-repo", "hff", "hf-file", "dio", "direct-io"} {
		if st := statusOf(lb, n); st != statusNA {
			t.Errorf("bench: -%s is %q; it is refused (not applicable)", n, st)
		}
	}

	sfs := flag.NewFlagSet("serve-bench", flag.ContinueOnError)
	defineServeBench(sfs)
	noEffect, refused := map[string]bool{}, map[string]bool{}
	for n := range vllmNoEffect {
		noEffect[n] = true
	}
	for n := range vllmRefused {
		refused[n] = true
	}
	checkFlagTable(t, "serve-bench", vl, vlAdd, sfs, noEffect, refused)

	checkEndpoints(t, eps)
}

// statusOf returns the status of the row listing flag name.
func statusOf(rows []compatRow, name string) string {
	for _, r := range rows {
		for _, n := range r.names {
			if strings.TrimLeft(n, "-") == name {
				return r.status
			}
		}
	}
	return ""
}

// checkEndpoints asks a llmbench serve handler (built-in model) every endpoint of the
// table: the working ones answer 200, the others 404; and every route the server
// registers (engine/server/server.go) is a working row.
func checkEndpoints(t *testing.T, rows []compatRow) {
	e, err := engine.LoadBytes(context.Background(), builtin.Name, builtin.Stories260K, engine.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	srv, err := server.New(server.Config{Gen: e, Tok: e.Tok, Model: "stories260K", Context: e.Options().SeqContext, MaxRunning: 1, MaxQueue: 4})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	bodies := map[string]string{
		"/v1/completions":      `{"model":"stories260K","prompt":"Once","max_tokens":2}`,
		"/v1/chat/completions": `{"model":"stories260K","messages":[{"role":"user","content":"Hi"}],"max_tokens":2}`,
		"/tokenize":            `{"prompt":"Once upon"}`,
		"/detokenize":          `{"tokens":[1,2]}`,
	}
	var documented []string
	for _, r := range rows {
		method, path, ok := strings.Cut(r.names[0], " ")
		if !ok {
			t.Fatalf("endpoint %q: want METHOD /path", r.names[0])
		}
		path = strings.ReplaceAll(path, "{id}", "stories260K")
		documented = append(documented, strings.ReplaceAll(strings.TrimSpace(r.names[0][len(method)+1:]), "{id}", "{id...}"))
		body := bodies[path]
		if method == http.MethodPost && body == "" {
			body = "{}"
		}
		req, _ := http.NewRequest(method, hs.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := hs.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		switch r.status {
		case statusWorks:
			if resp.StatusCode != http.StatusOK {
				t.Errorf("%s: HTTP %d; the doc says it works", r.names[0], resp.StatusCode)
			}
		case statusNA:
			if resp.StatusCode != http.StatusNotFound {
				t.Errorf("%s: HTTP %d; the doc says not applicable (404)", r.names[0], resp.StatusCode)
			}
		default:
			t.Errorf("%s: status %q", r.names[0], r.status)
		}
	}
	src, err := os.ReadFile("engine/server/server.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`HandleFunc\("(/[^"]+)"`).FindAllStringSubmatch(string(src), -1) {
		if !slices.Contains(documented, m[1]) {
			t.Errorf("llmbench serve routes %s, which docs/COMPATIBILITY.md does not list", m[1])
		}
	}
}
