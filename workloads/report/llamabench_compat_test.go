package report

// Checks that llama.cpp's tools read our llama-bench files. The facts below were
// read (not copied) from ggml-org/llama.cpp: tools/llama-bench/llama-bench.cpp at
// 0104b151c56d54143e2e3554aabe9e2b2b8dbdba (get_fields, get_field_type, the json and
// sql printers) and scripts/compare-llama-bench.py in its version with n_cpu_moe,
// fit_target and fit_min_ctx (LLAMA_BENCH_DB_FIELDS/TYPES, LLAMA_BENCH_KEY_PROPERTIES,
// _check_keys); docs/COMPATIBILITY.md pins the same versions.

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// llamaBenchFieldTypes are llama-bench's 40 output fields in its order, with their
// types (get_field_type: STRING, BOOL, INT, FLOAT).
var llamaBenchFieldTypes = [][2]string{
	{"build_commit", "STRING"}, {"build_number", "INT"}, {"cpu_info", "STRING"}, {"gpu_info", "STRING"}, {"backends", "STRING"},
	{"model_filename", "STRING"}, {"model_type", "STRING"}, {"model_size", "INT"}, {"model_n_params", "INT"}, {"n_batch", "INT"},
	{"n_ubatch", "INT"}, {"n_threads", "INT"}, {"cpu_mask", "STRING"}, {"cpu_strict", "BOOL"}, {"poll", "INT"},
	{"type_k", "STRING"}, {"type_v", "STRING"}, {"n_gpu_layers", "INT"}, {"n_cpu_moe", "INT"}, {"split_mode", "STRING"},
	{"main_gpu", "INT"}, {"no_kv_offload", "BOOL"}, {"flash_attn", "INT"}, {"devices", "STRING"}, {"tensor_split", "STRING"},
	{"tensor_buft_overrides", "STRING"}, {"load_mode", "STRING"}, {"embeddings", "BOOL"},
	{"no_op_offload", "INT"}, {"no_host", "BOOL"}, {"fit_target", "INT"}, {"fit_min_ctx", "INT"},
	{"n_prompt", "INT"}, {"n_gen", "INT"}, {"n_depth", "INT"},
	{"test_time", "STRING"}, {"avg_ns", "INT"}, {"stddev_ns", "INT"}, {"avg_ts", "FLOAT"}, {"stddev_ts", "FLOAT"},
}

// compareScriptColumns are the columns of the table compare-llama-bench.py loads
// JSON, JSONL and CSV files into, with its SQL types (LLAMA_BENCH_DB_FIELDS/TYPES);
// on an SQLite file it queries these columns of our table directly.
var compareScriptColumns = map[string]string{
	"build_commit": "TEXT", "build_number": "INTEGER", "cpu_info": "TEXT", "gpu_info": "TEXT", "backends": "TEXT", "model_filename": "TEXT",
	"model_type": "TEXT", "model_size": "INTEGER", "model_n_params": "INTEGER", "n_batch": "INTEGER", "n_ubatch": "INTEGER", "n_threads": "INTEGER",
	"cpu_mask": "TEXT", "cpu_strict": "INTEGER", "poll": "INTEGER", "type_k": "TEXT", "type_v": "TEXT", "n_gpu_layers": "INTEGER",
	"split_mode": "TEXT", "main_gpu": "INTEGER", "no_kv_offload": "INTEGER", "flash_attn": "INTEGER", "tensor_split": "TEXT", "tensor_buft_overrides": "TEXT",
	"use_mmap": "INTEGER", "embeddings": "INTEGER", "no_op_offload": "INTEGER", "n_prompt": "INTEGER", "n_gen": "INTEGER", "n_depth": "INTEGER",
	"test_time": "TEXT", "avg_ns": "INTEGER", "stddev_ns": "INTEGER", "avg_ts": "REAL", "stddev_ts": "REAL", "n_cpu_moe": "INTEGER",
	"fit_target": "INTEGER", "fit_min_ctx": "INTEGER",
}

// compareScriptRequired are the keys its loader refuses a file without
// (LLAMA_BENCH_KEY_PROPERTIES plus build_commit, test_time, avg_ts); the first 26
// also join baseline and compare rows in its query.
var compareScriptRequired = []string{
	"cpu_info", "gpu_info", "backends", "n_gpu_layers", "n_cpu_moe", "tensor_buft_overrides", "model_filename", "model_type",
	"n_batch", "n_ubatch", "embeddings", "cpu_mask", "cpu_strict", "poll", "n_threads", "type_k", "type_v",
	"use_mmap", "no_kv_offload", "split_mode", "main_gpu", "tensor_split", "flash_attn", "n_prompt", "n_gen", "n_depth",
	"fit_target", "fit_min_ctx", "build_commit", "test_time", "avg_ts",
}

// sqlOfKind is the SQL type llama-bench's sql printer gives a field type.
var sqlOfKind = map[string]string{"STRING": "TEXT", "BOOL": "INTEGER", "INT": "INTEGER", "FLOAT": "REAL"}

func TestLlamaBenchKeysAndTypes(t *testing.T) {
	if len(llamaBenchFieldTypes) != LlamaBenchKeys {
		t.Fatalf("%d llama-bench fields listed; LlamaBenchKeys is %d", len(llamaBenchFieldTypes), LlamaBenchKeys)
	}
	kinds := map[lbKind]string{lbString: "STRING", lbInt: "INT", lbBool: "BOOL", lbFloat: "FLOAT"}
	for i, want := range llamaBenchFieldTypes {
		if f := lbFields[i]; f.name != want[0] || kinds[f.kind] != want[1] {
			t.Errorf("field %d: %s %s; llama-bench has %s %s", i, f.name, kinds[f.kind], want[0], want[1])
		}
	}
	seen := map[string]bool{}
	for _, f := range lbFields {
		if seen[f.name] {
			t.Errorf("field %s twice", f.name)
		}
		seen[f.name] = true
	}
	// JSON values as llama-bench's json printer types them: BOOL true/false, INT and
	// FLOAT bare numbers, STRING quoted; samples_ns and samples_ts right after.
	var b bytes.Buffer
	if err := LlamaBenchJSON(&b, lbResult()); err != nil {
		t.Fatal(err)
	}
	var objs []map[string]json.RawMessage
	if err := json.Unmarshal(b.Bytes(), &objs); err != nil {
		t.Fatal(err)
	}
	for _, ft := range llamaBenchFieldTypes {
		raw := string(objs[0][ft[0]])
		ok := false
		switch ft[1] {
		case "STRING":
			ok = strings.HasPrefix(raw, `"`)
		case "BOOL":
			ok = raw == "true" || raw == "false"
		case "INT":
			ok = regexp.MustCompile(`^-?[0-9]+$`).MatchString(raw)
		case "FLOAT":
			ok = regexp.MustCompile(`^-?[0-9.eE+-]+$`).MatchString(raw)
		}
		if !ok {
			t.Errorf("json %s = %s; llama-bench writes a %s", ft[0], raw, ft[1])
		}
	}
	keys := jsonKeyOrder(t, b.Bytes())
	if i := indexOf(keys, "samples_ns"); i != LlamaBenchKeys || keys[i+1] != "samples_ts" {
		t.Errorf("samples_ns at %d (want %d, samples_ts after): %v", i, LlamaBenchKeys, keys)
	}
}

// jsonKeyOrder returns the keys of the first object of a JSON array, in file order.
func jsonKeyOrder(t *testing.T, data []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	var keys []string
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		switch v := tok.(type) {
		case json.Delim:
			if v == '{' || v == '[' {
				depth++
			} else {
				depth--
				if depth == 1 {
					return keys
				}
			}
		case string:
			if depth == 2 {
				keys = append(keys, v)
				// Skip the value (arrays are consumed by the Delim cases).
				if t2, _ := dec.Token(); t2 == json.Delim('[') {
					for dec.More() {
						dec.Token()
					}
					dec.Token()
				}
			}
		}
	}
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

// TestCompareLlamaBenchAccepts checks every key and column compare-llama-bench.py's
// loaders need against our JSON, JSONL, CSV and SQL, with the types it expects.
func TestCompareLlamaBenchAccepts(t *testing.T) {
	res := lbResult()
	render := func(f LlamaBenchFunc) []byte {
		var b bytes.Buffer
		if err := f(&b, res); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	// JSON and JSONL: every required key, each value storable in its column type
	// (sqlite stores JSON booleans as INTEGER 0/1 through Python's sqlite3).
	check := func(format string, o map[string]any) {
		for _, k := range compareScriptRequired {
			if _, ok := o[k]; !ok {
				t.Errorf("%s: key %s missing (compare-llama-bench.py: Missing required data key(s))", format, k)
			}
		}
		for k, typ := range compareScriptColumns {
			v, ok := o[k]
			if !ok {
				continue
			}
			good := false
			switch typ {
			case "TEXT":
				_, good = v.(string)
			case "INTEGER":
				switch x := v.(type) {
				case bool:
					good = true
				case float64:
					good = x == float64(int64(x))
				}
			case "REAL":
				_, good = v.(float64)
			}
			if !good {
				t.Errorf("%s: %s = %#v does not fit column type %s", format, k, v, typ)
			}
		}
	}
	var arr []map[string]any
	if err := json.Unmarshal(render(LlamaBenchJSON), &arr); err != nil {
		t.Fatal(err)
	}
	for _, o := range arr {
		check("json", o)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(render(LlamaBenchJSONL))), "\n") {
		var o map[string]any
		if err := json.Unmarshal([]byte(line), &o); err != nil {
			t.Fatalf("jsonl: %v", err)
		}
		check("jsonl", o)
	}
	// CSV: the header names every required key.
	rows, err := csv.NewReader(bytes.NewReader(render(LlamaBenchCSV))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range compareScriptRequired {
		if indexOf(rows[0], k) < 0 {
			t.Errorf("csv: column %s missing", k)
		}
	}
	// SQL: CREATE TABLE llama_bench with every column the script queries, in its type.
	sql := string(render(LlamaBenchSQL))
	cols := map[string]string{}
	m := regexp.MustCompile(`(?s)CREATE TABLE IF NOT EXISTS llama_bench \((.*?)\);`).FindStringSubmatch(sql)
	if m == nil {
		t.Fatalf("no CREATE TABLE llama_bench in\n%s", sql)
	}
	for _, line := range strings.Split(m[1], "\n") {
		if f := strings.Fields(strings.TrimSuffix(strings.TrimSpace(line), ",")); len(f) == 2 {
			cols[f[0]] = f[1]
		}
	}
	for k, typ := range compareScriptColumns {
		if got, ok := cols[k]; !ok || got != typ {
			t.Errorf("sql: column %s is %q; compare-llama-bench.py expects %s", k, got, typ)
		}
	}
	for _, ft := range llamaBenchFieldTypes {
		if cols[ft[0]] != sqlOfKind[ft[1]] {
			t.Errorf("sql: column %s is %s; llama-bench's sql printer writes %s", ft[0], cols[ft[0]], sqlOfKind[ft[1]])
		}
	}
	// Where sqlite3 is installed, load the statements and run the join the script
	// runs on an SQLite file: rows of one build against another, matched on every key
	// property, t/s averaged.
	sqlite, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Log("sqlite3 not installed: the SQL was checked as text only")
		return
	}
	db := filepath.Join(t.TempDir(), "llama-bench.sqlite")
	cmd := exec.Command(sqlite, db)
	cmd.Stdin = strings.NewReader(sql + strings.ReplaceAll(sql[strings.Index(sql, "INSERT"):], "'abc'", "'def'"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sqlite3 rejects our SQL: %v\n%s", err, out)
	}
	var on []string
	for _, k := range compareScriptRequired[:26] {
		on = append(on, "tb."+k+" = tc."+k)
	}
	q := "SELECT tb.model_type, tb.n_prompt, tb.n_gen, tb.n_depth, AVG(tb.avg_ts), AVG(tc.avg_ts) FROM llama_bench tb JOIN llama_bench tc ON " +
		strings.Join(on, " AND ") + " AND tb.build_commit = 'abc' AND tc.build_commit = 'def' GROUP BY tb.model_type, tb.n_gen, tb.n_prompt, tb.n_depth;"
	out, err := exec.Command(sqlite, db, q).CombinedOutput()
	if err != nil {
		t.Fatalf("the compare query fails: %v\n%s", err, out)
	}
	if n := len(strings.Split(strings.TrimSpace(string(out)), "\n")); n != 2 {
		t.Errorf("compare query: %d rows (want pp512 and tg128):\n%s", n, out)
	}
	_ = os.Remove(db)
}
