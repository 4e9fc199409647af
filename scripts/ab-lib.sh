# Helpers for the make bench scripts that alternate llmbench runs (source it).

# median NUMBERS: the median of the space-separated numbers.
median() {
  tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{ a[n++] = $1 } END { print (n % 2) ? a[int(n/2)] : (a[n/2-1] + a[n/2]) / 2 }'
}

# bench_ts VAR=VALUE BENCH-ARGS...: runs `llmbench bench BENCH-ARGS -o jsonl` with the
# variable set and prints the first test's t/s (avg_ts, two decimals).
bench_ts() {
  local var=$1
  shift
  env "$var" ./bin/llmbench bench "$@" -o jsonl 2>/dev/null | grep -o '"avg_ts": *[0-9.e+-]*' | head -1 | sed 's/.*: *//' | awk '{ printf "%.2f", $1 }'
}

# jsonl_rows FILE TAG NAME: one "TAG NAME threads test t/s" line per test of a bench or
# llama-bench `-o jsonl` run (test: ppN or tgN, with @dD after a depth D of context).
# NAME - takes each line's model_type ("llama_1B_Q4_0"), so that the tests of a run over
# several models stay apart.
jsonl_rows() {
  awk -v tag="$2" -v name="$3" '{
    m = name
    if (m == "-" && match($0, /"model_type": *"[^"]*"/)) { m = substr($0, RSTART, RLENGTH); sub(/^"model_type": *"/, "", m); sub(/"$/, "", m); gsub(/ /, "_", m) }
    match($0, /"n_threads": *[0-9]+/); t = substr($0, RSTART, RLENGTH); sub(/.*: */, "", t)
    match($0, /"n_prompt": *[0-9]+/); p = substr($0, RSTART, RLENGTH); sub(/.*: */, "", p)
    match($0, /"n_gen": *[0-9]+/); g = substr($0, RSTART, RLENGTH); sub(/.*: */, "", g)
    match($0, /"avg_ts": *[0-9.e+-]+/); v = substr($0, RSTART, RLENGTH); sub(/.*: */, "", v)
    d = 0
    if (match($0, /"n_depth": *[0-9]+/)) { d = substr($0, RSTART, RLENGTH); sub(/.*: */, "", d) }
    print tag, m, t, (p + 0 > 0 ? "pp" p : "tg" g) (d + 0 > 0 ? "@d" d : ""), v
  }' "$1"
}

# ab_awk: awk functions for the tables of the alternated-round scripts. Their rows fill
# v[KEY, i] (a key's values, sorted, n[KEY] of them) and by[KEY, ROUND]; rounds is the
# number of rounds. med(KEY) is the median of a key's values; pm(A, B) the median over
# rounds of by[A, r] / by[B, r] (the runs of a round are back to back, so each pair shares
# the machine's phase), with pm_lo and pm_hi their range (0 and "" without a pair).
# Put it before the program: awk "$ab_awk"'...'.
ab_awk='
function med(k,  c) { c = n[k]; if (!c) return 0; return (c % 2) ? v[k, int(c / 2)] : (v[k, c / 2 - 1] + v[k, c / 2]) / 2 }
function pm(a, b,  r, c, i, q, x) {
  c = 0
  for (r = 1; r <= rounds; r++) {
    if (!by[b, r] || !((a, r) in by)) continue
    x = by[a, r] / by[b, r]
    for (i = c; i > 0 && q[i - 1] > x; i--) q[i] = q[i - 1]
    q[i] = x; c++
  }
  pm_lo = c ? q[0] : ""; pm_hi = c ? q[c - 1] : ""
  if (!c) return 0
  return (c % 2) ? q[int(c / 2)] : (q[c / 2 - 1] + q[c / 2]) / 2
}
'
