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
