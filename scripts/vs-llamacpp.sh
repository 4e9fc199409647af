#!/usr/bin/env bash
# make bench: issue 12's llama.cpp line — on synthetic llama-1b in every weight type,
# prompt and decode at least as fast as llama.cpp on the same files (≥ 1.0×). Needs
# LLAMA_BENCH, a llama-bench binary (without it the script says so and passes: the
# comparison is optional, llama.cpp is not part of the build). This VM's speed moves a
# lot from minute to minute, so each round runs ours and then llama.cpp for every type
# (alternating which goes first), and the table gives the medians of ROUNDS rounds
# (default 3). TYPES (default Q4_0,Q4_K_M,Q8_0,F16,BF16), P and N (default 512 and 128)
# and THREADS (default 2) change the runs; LLMBENCH_CPU applies to ours as everywhere
# (compare LLMBENCH_CPU=avx2 with a llama.cpp built without AVX-512, and
# LLMBENCH_CPU=avxvnni with one built -DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON
# -DGGML_F16C=ON -DGGML_AVX_VNNI=ON -DGGML_AVX512=OFF).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/ab-lib.sh
if [ -z "${LLAMA_BENCH:-}" ]; then
  echo "vs-llamacpp: LLAMA_BENCH is not set (a llama-bench binary): skipped"
  exit 0
fi
rounds=${ROUNDS:-3} types=${TYPES:-Q4_0,Q4_K_M,Q8_0,F16,BF16} p=${P:-512} n=${N:-128} t=${THREADS:-2}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ours() { # TYPE: our run; records the model file it used for llama.cpp
  ./bin/llmbench bench --shape llama-1b --type "$1" -p "$p" -n "$n" -t "$t" -r 1 -o jsonl 2>/dev/null >"$tmp/run"
  grep -o '"model_filename": *"[^"]*"' "$tmp/run" | head -1 | sed 's/.*: *"//; s/"$//' >"$tmp/file.$1"
  jsonl_rows "$tmp/run" ours "$1" | sed "s/\$/ $r/" >>"$tmp/all"
}
theirs() { # TYPE
  "$LLAMA_BENCH" -m "$(cat "$tmp/file.$1")" -p "$p" -n "$n" -t "$t" -r 1 -o jsonl 2>/dev/null >"$tmp/run"
  jsonl_rows "$tmp/run" llama.cpp "$1" | sed "s/\$/ $r/" >>"$tmp/all"
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
# Lines "TAG TYPE threads test t/s round", sorted so that each key's values are in order.
# Each round's two runs were back to back, so the ratio is the median of the rounds' own
# ratios (as scripts/small-models.sh's t2/t1; this VM's speed drifts between rounds),
# with their range: where it straddles 1.0 the rounds disagree, and a median under 1.0
# is this machine's noise as much as a gap (the line says so).
sort -k1,1 -k2,2 -k4,4 -k5,5g "$tmp/all" | awk -v rounds="$rounds" -v p="$p" -v gen="$n" -v t="$t" -v types="$types" -v level="${LLMBENCH_CPU:+, LLMBENCH_CPU=$LLMBENCH_CPU}" "$ab_awk"'
  { k = $1 " " $2 " " $4; v[k, n[k]++] = $5; by[k, $6] = $5 }
  END {
    printf "vs-llamacpp: llama-1b, -p %s -n %s -t %s, medians of %d alternated rounds%s (t/s; ratio: median over rounds of ours/llama.cpp; CPU: llmbench sysinfo)\n", p, gen, t, rounds, level
    printf "%-8s %-6s %10s %10s %7s  %s\n", "type", "test", "ours", "llama.cpp", "ratio", "rounds (ratio range)"
    bad = 0
    nt = split(types, ty, ",")
    split("pp" p " tg" gen, tests, " ")
    for (i = 1; i <= nt; i++) {
      for (j = 1; j <= 2; j++) {
        ts = tests[j]
        key = ty[i] " " ts
        if (!n["ours " key] && !n["llama.cpp " key]) continue
        o = med("ours " key); l = med("llama.cpp " key); pr = pm("ours " key, "llama.cpp " key)
        line = sprintf("%-8s %-6s %10.2f %10.2f %6.2fx  %s", ty[i], ts, o, l, pr, pm_lo == "" ? "-" : sprintf("%.2f-%.2fx", pm_lo, pm_hi))
        if (pr < 1) {
          line = line "  FAIL: under llama.cpp"
          if (pm_hi != "" && pm_hi >= 1) line = line " (rounds disagree: within this machine'"'"'s noise)"
          bad = 1
        }
        print line
      }
    }
    exit bad
  }'
