#!/usr/bin/env bash
# make bench: the AMX line of issue 12 — on a CPU with AMX-INT8, pp512 of synthetic
# llama-1b Q4_0 and Q8_0 with 2 threads on the AMX kernels (LLMBENCH_CPU=amx) against the
# VNNI kernels (LLMBENCH_CPU=avx512), ROUNDS rounds alternating the two (a shared
# machine's speed moves between runs), the median of each; fails under TARGET× (1.5).
# Without AMX it says so and passes. Batch invariance on AMX is the kernel tests' job
# (TestMatMulBatchInvariant, TestMatMulAMXSameAsVNNI).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/ab-lib.sh
rounds=${ROUNDS:-3}
target=${TARGET:-1.5}
if ! grep -qw amx_int8 /proc/cpuinfo 2>/dev/null; then
  echo "amx-check: this CPU has no AMX-INT8 ($(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ //')): skipped"
  exit 0
fi
if ! ./bin/llmbench sysinfo -t 2 --bw-size 64MiB --bw-probes 1 | grep -q 'amx-int8'; then
  echo "amx-check: the CPU has AMX-INT8 but the AMX kernels are off (see llmbench sysinfo): FAIL"
  exit 1
fi
fail=0
for ty in Q4_0 Q8_0; do
  declare -A runs=()
  for r in $(seq "$rounds"); do
    for lv in amx avx512; do
      v=$(bench_ts LLMBENCH_CPU=$lv --shape llama-1b --type "$ty" -p 512 -n 0 -t 2 -r 2)
      runs[$lv]+="$v "
      echo "amx-check: $ty round $r LLMBENCH_CPU=$lv pp512 $v t/s"
    done
  done
  a=$(median "${runs[amx]}") v=$(median "${runs[avx512]}")
  ok=$(awk -v a="$a" -v v="$v" -v t="$target" 'BEGIN { printf "%.2f %d", a / v, (a / v >= t) }')
  echo "amx-check: $ty pp512 AMX $a t/s / VNNI $v t/s = ${ok% *}x (target >= ${target}x, medians of $rounds)"
  [ "${ok#* }" = 1 ] || { echo "amx-check: $ty: FAIL"; fail=1; }
  unset runs
done
exit $fail
