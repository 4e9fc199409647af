#!/usr/bin/env bash
# make bench: issue 12's llama.cpp line — on synthetic llama-1b in every weight type,
# prompt and decode at least as fast as llama.cpp on the same files (≥ 1.0×). Needs
# LLAMA_BENCH, a llama-bench binary (without it the script says so and passes: the
# comparison is optional, llama.cpp is not part of the build). This VM's speed moves a
# lot from minute to minute, so each round runs ours and then llama.cpp for every type
# (alternating which goes first), and the table gives the medians of ROUNDS rounds
# (default 3). TYPES (default Q4_0,Q4_K_M,Q8_0,F16,BF16), P and N (default 512 and 128)
# and THREADS (default 2) change the runs; LLMBENCH_CPU applies to ours as everywhere
# (compare LLMBENCH_CPU=avx2 with a llama.cpp built without AVX-512).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${LLAMA_BENCH:-}" ]; then
  echo "vs-llamacpp: LLAMA_BENCH is not set (a llama-bench binary): skipped"
  exit 0
fi
rounds=${ROUNDS:-3} types=${TYPES:-Q4_0,Q4_K_M,Q8_0,F16,BF16} p=${P:-512} n=${N:-128} t=${THREADS:-2}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# rows FILE TAG TYPE: one "TAG TYPE test t/s" line per test of a jsonl run.
rows() {
  awk -v tag="$2" -v ty="$3" '{
    match($0, /"n_prompt": *[0-9]+/); pp = substr($0, RSTART, RLENGTH); sub(/.*: */, "", pp)
    match($0, /"n_gen": *[0-9]+/); g = substr($0, RSTART, RLENGTH); sub(/.*: */, "", g)
    match($0, /"avg_ts": *[0-9.e+-]+/); v = substr($0, RSTART, RLENGTH); sub(/.*: */, "", v)
    print tag, ty, (pp + 0 > 0 ? "pp" pp : "tg" g), v
  }' "$1"
}
ours() { # TYPE: our run; records the model file it used for llama.cpp
  ./bin/llmbench bench --shape llama-1b --type "$1" -p "$p" -n "$n" -t "$t" -r 1 -o jsonl 2>/dev/null >"$tmp/run"
  grep -o '"model_filename": *"[^"]*"' "$tmp/run" | head -1 | sed 's/.*: *"//; s/"$//' >"$tmp/file.$1"
  rows "$tmp/run" ours "$1" >>"$tmp/all"
}
theirs() { # TYPE
  "$LLAMA_BENCH" -m "$(cat "$tmp/file.$1")" -p "$p" -n "$n" -t "$t" -r 1 -o jsonl 2>/dev/null >"$tmp/run"
  rows "$tmp/run" llama.cpp "$1" >>"$tmp/all"
}
for r in $(seq "$rounds"); do
  for ty in ${types//,/ }; do
    if [ $((r % 2)) = 1 ] || [ ! -s "$tmp/file.$ty" ]; then
      ours "$ty"
      theirs "$ty"
    else
      theirs "$ty"
      ours "$ty"
    fi
  done
  echo "vs-llamacpp: round $r/$rounds done"
done
awk -v rounds="$rounds" -v p="$p" -v n="$n" -v t="$t" -v level="${LLMBENCH_CPU:+, LLMBENCH_CPU=$LLMBENCH_CPU}" '
  { k = $1 " " $2 " " $3; v[k, c[k]++] = $4; if (!seen[$2 " " $3]++) order[m++] = $2 " " $3 }
  function med(k,  i, j, x, a, cnt) {
    cnt = c[k]; if (!cnt) return 0
    for (i = 0; i < cnt; i++) a[i] = v[k, i]
    for (i = 1; i < cnt; i++) { x = a[i]; for (j = i - 1; j >= 0 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
    return (cnt % 2) ? a[int(cnt / 2)] : (a[cnt / 2 - 1] + a[cnt / 2]) / 2
  }
  END {
    printf "vs-llamacpp: llama-1b, -p %s -n %s -t %s, medians of %d alternated rounds%s (t/s; CPU: llmbench sysinfo)\n", p, n, t, rounds, level
    printf "%-8s %-6s %10s %10s %7s\n", "type", "test", "ours", "llama.cpp", "ratio"
    bad = 0
    for (i = 0; i < m; i++) {
      split(order[i], a, " ")
      o = med("ours " order[i]); l = med("llama.cpp " order[i])
      line = sprintf("%-8s %-6s %10.2f %10.2f %6.2fx", a[1], a[2], o, l, l ? o / l : 0)
      if (!l || o < l) { line = line "  FAIL: under llama.cpp"; bad = 1 }
      print line
    }
    exit bad
  }' "$tmp/all"
