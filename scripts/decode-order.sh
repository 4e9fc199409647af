#!/usr/bin/env bash
# make bench: the decode order check of issue 12 — on this machine, tg32 of synthetic
# llama-1b (Q4_0, Q8_0, F16; 2 threads) with LLMBENCH_DECODE_ORDER=quarters against
# =adjacent, ROUNDS rounds (default 3) alternating the two, the median of each. It
# prints which order reads faster per type and fails when the order this CPU gets by
# default is more than 5 % slower than the other for a type (the vendor default is then
# wrong for this machine: set the variable, and say so in an issue). Without the AVX-512
# kernels the order does not apply, and it says it skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/ab-lib.sh
rounds=${ROUNDS:-3}
types=${TYPES:-Q4_0 Q8_0 F16}
if [ -n "${LLMBENCH_DECODE_ORDER:-}" ]; then
  echo "decode-order: unset LLMBENCH_DECODE_ORDER (=$LLMBENCH_DECODE_ORDER) to check the default"
  exit 1
fi
info=$(./bin/llmbench sysinfo --bw-size 64MiB --bw-probes 1 2>/dev/null)
if ! grep -q 'decode .*VPDPBUSD zmm' <<<"$info"; then
  echo "decode-order: no AVX-512 decode kernels here (see llmbench sysinfo): skipped"
  exit 0
fi
default=adjacent
grep -q 'Q4_0 .*decode .*one from each quarter' <<<"$info" && default=quarters
fail=0
for ty in $types; do
  declare -A runs=()
  for r in $(seq "$rounds"); do
    for o in quarters adjacent; do
      runs[$o]+="$(bench_ts LLMBENCH_DECODE_ORDER=$o --shape llama-1b --type "$ty" -p 0 -n 32 -t 2 -r 2) "
    done
  done
  q=$(median "${runs[quarters]}") a=$(median "${runs[adjacent]}")
  line=$(awk -v q="$q" -v a="$a" -v d="$default" -v ty="$ty" -v n="$rounds" 'BEGIN {
    best = (q >= a) ? "quarters" : "adjacent"
    mine = (d == "quarters") ? q : a; other = (d == "quarters") ? a : q
    printf "decode-order: %s tg32: quarters %.2f t/s, adjacent %.2f t/s (medians of %d); faster: %s; default here: %s (%.2fx the other)", ty, q, a, n, best, d, mine / other
    exit !(mine >= 0.95 * other)
  }') || { echo "$line  FAIL: the default is more than 5 % slower"; fail=1; unset runs; continue; }
  echo "$line"
  unset runs
done
exit $fail
