#!/usr/bin/env bash
# Kernel A/B for development (not part of make bench): the kernels/cpu benchmarks
# matching BENCH (default BenchmarkTileKernel, each tile kernel alone in L2) of git
# revision BASE (default HEAD) against the working tree, ROUNDS rounds (default 8)
# alternating the two test binaries, with the median and the best of each line's
# custom metric (GB/s or GFLOP/s; ns/op where there is none) and their ratios. On a
# shared VM one run of either says little: speeds there move by a fifth from minute
# to minute, and only alternated rounds compare. LLMBENCH_CPU applies as everywhere
# (LLMBENCH_CPU=avx2 times the AVX2 kernels). BENCHTIME (default 2000x) is passed on.
#
#   BENCH='BenchmarkTileKernel/Q4_K/' LLMBENCH_CPU=avx2 scripts/kernel-ab.sh HEAD~1
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/ab-lib.sh
base=${1:-HEAD}
bench=${BENCH:-BenchmarkTileKernel}
rounds=${ROUNDS:-8}
tmp=$(mktemp -d)
trap 'git worktree remove --force "$tmp/base" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
git worktree add --detach "$tmp/base" "$base" >/dev/null 2>&1
(cd "$tmp/base/kernels/cpu" && go test -c -o "$tmp/base.test" .)
(cd kernels/cpu && go test -c -o "$tmp/tree.test" .)
for r in $(seq "$rounds"); do
  order="base tree"
  [ $((r % 2)) = 0 ] && order="tree base"
  for b in $order; do
    # Each line: name, then value-unit pairs; keep the last custom metric (or ns/op).
    "$tmp/$b.test" -test.run '^$' -test.bench "$bench" -test.benchtime "${BENCHTIME:-2000x}" 2>/dev/null |
      awk -v b="$b" '/^Benchmark/ {
        v = $3; u = "ns/op"
        for (i = 5; i + 1 <= NF; i += 2) if ($(i + 1) != "B/op" && $(i + 1) != "allocs/op" && $(i + 1) != "MB/s") { v = $i; u = $(i + 1) }
        print b, $1, u, v
      }' >>"$tmp/all"
  done
  echo "kernel-ab: round $r/$rounds done" >&2
done
echo "kernel-ab: $bench, $base (base) against the working tree, $rounds alternated rounds${LLMBENCH_CPU:+, LLMBENCH_CPU=$LLMBENCH_CPU}"
sort -k2,2 -k1,1 -k4,4g "$tmp/all" | awk "$ab_awk"'
  function flush() {
    if (name == "") return
    mb = med("base"); mt = med("tree")
    better = (unit == "ns/op") ? -1 : 1
    bb = best("base", better); bt = best("tree", better)
    printf "%-44s %-8s base %9.2f (best %9.2f)  tree %9.2f (best %9.2f)  %5.2fx\n", name, unit, mb, bb, mt, bt, (better > 0 ? mt / mb : mb / mt)
  }
  function best(b, better) { return better > 0 ? v[b, n[b] - 1] : v[b, 0] }
  $2 != name { flush(); name = $2; unit = $3; delete n; delete v }
  { v[$1, n[$1]++] = $4 }
  END { flush() }'
