#!/usr/bin/env bash
# ceiling-check.sh MIN -- BENCH ARGS: runs `llmbench bench ARGS --ceiling`, prints its output,
# and fails unless every tg test reads weights at MIN % or more of the measured read-bandwidth
# ceiling (issue 12: llama-1b tg128 at ≥ 80 % for the 4-bit types, ≥ 90 % for Q8_0/F16/BF16;
# issue 17: a small qwen3moe's tg128 at ≥ 70 %, active experts counted).
set -euo pipefail
min=$1; shift
[ "${1:-}" = "--" ] && shift
out=$(./bin/llmbench bench "$@" --ceiling 2>&1) || { echo "$out"; exit 1; }
echo "$out"
lines=$(grep -E '= [0-9]+% of the read-bandwidth ceiling' <<<"$out" || true)
[ -n "$lines" ] || { echo "ceiling-check: no tg line against the ceiling" >&2; exit 1; }
bad=0
while read -r line; do
  pct=$(sed -E 's/.*= ([0-9]+)% of the read-bandwidth ceiling.*/\1/' <<<"$line")
  if [ "$pct" -lt "$min" ]; then
    echo "ceiling-check: FAIL ${pct}% < ${min}%: $line" >&2; bad=1
  else
    echo "ceiling-check: PASS ${pct}% ≥ ${min}%"
  fi
done <<<"$lines"
exit $bad
