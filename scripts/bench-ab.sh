#!/usr/bin/env bash
# Whole-model A/B for development (not part of make bench): `llmbench bench ARGS` of git
# revision BASE against the working tree, ROUNDS rounds (default 5) alternating which
# binary goes first, with each test's median t/s per side and the median over rounds of
# the tree/base ratio (each round's two runs are back to back, so a pair shares the
# machine's phase) and its range. On a shared VM one run of either says little: only
# alternated rounds compare.
#
#   scripts/bench-ab.sh HEAD~1 -m model.gguf -p 0 -n 64 -d 1024 -t 2 -r 3
#
# BASE_BIN and TREE_BIN, where both are set, are the two llmbench binaries to run
# instead (BASE is then only the table's name for the first).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/ab-lib.sh
if [ $# -lt 2 ]; then
  echo "usage: scripts/bench-ab.sh BASE BENCH-ARGS..." >&2
  exit 2
fi
base=$1
shift
rounds=${ROUNDS:-5}
tmp=$(mktemp -d)
trap 'git worktree remove --force "$tmp/base" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
if [ -n "${BASE_BIN:-}" ] && [ -n "${TREE_BIN:-}" ]; then
  ln -s "$BASE_BIN" "$tmp/base.bin"
  ln -s "$TREE_BIN" "$tmp/tree.bin"
else
  git worktree add --detach "$tmp/base" "$base" >/dev/null 2>&1
  (cd "$tmp/base" && go build -o "$tmp/base.bin" .)
  go build -o "$tmp/tree.bin" .
fi
for r in $(seq "$rounds"); do
  order="base tree"
  [ $((r % 2)) = 0 ] && order="tree base"
  for b in $order; do
    if ! "$tmp/$b.bin" bench "$@" -o jsonl 2>"$tmp/err" >"$tmp/run"; then
      echo "bench-ab: the $b binary failed:" >&2
      tail -5 "$tmp/err" >&2
      exit 1
    fi
    jsonl_rows "$tmp/run" "$b" - | sed "s/\$/ $r/" >>"$tmp/all"
  done
  echo "bench-ab: round $r/$rounds done" >&2
done
echo "bench-ab: llmbench bench $*; $base (base) against the working tree, $rounds alternated rounds (t/s)"
sort -k2,2 -k3,3n -k4,4 -k1,1 -k5,5g "$tmp/all" | awk -v rounds="$rounds" "$ab_awk"'
  { t = $2 " " $3 " " $4; k = $1 " " t; v[k, n[k]++] = $5; by[k, $6] = $5; tests[t] = 1 }
  END {
    printf "%-20s %-8s %-12s %10s %10s %7s  %s\n", "model", "threads", "test", "base", "tree", "ratio", "rounds (ratio range)"
    for (t in tests) {
      split(t, a, " ")
      r = pm("tree " t, "base " t)
      printf "%-20s %-8s %-12s %10.2f %10.2f %6.3fx  %d (%.3f-%.3fx)\n", a[1], a[2], a[3], med("base " t), med("tree " t), r, rounds, pm_lo, pm_hi | "sort"
    }
  }'
