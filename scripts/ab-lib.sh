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
# llama-bench `-o jsonl` run (test: ppN or tgN).
jsonl_rows() {
  awk -v tag="$2" -v m="$3" '{
    match($0, /"n_threads": *[0-9]+/); t = substr($0, RSTART, RLENGTH); sub(/.*: */, "", t)
    match($0, /"n_prompt": *[0-9]+/); p = substr($0, RSTART, RLENGTH); sub(/.*: */, "", p)
    match($0, /"n_gen": *[0-9]+/); g = substr($0, RSTART, RLENGTH); sub(/.*: */, "", g)
    match($0, /"avg_ts": *[0-9.e+-]+/); v = substr($0, RSTART, RLENGTH); sub(/.*: */, "", v)
    print tag, m, t, (p + 0 > 0 ? "pp" p : "tg" g), v
  }' "$1"
}
