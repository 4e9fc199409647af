#!/usr/bin/env bash
# The import-direction rules of ../shared/docs/DESIGN.md §1 (docs/ARCHITECTURE.md):
#   kernels ← engine ← workloads/… ← profiles ← tui ← main
# only tui/... may import the terminal UI libraries, and package main talks to
# workloads/jobs, never to the serving or micro-benchmark packages directly.
# A `go list` that fails is a failure of the check, never an "ok".
set -euo pipefail
cd "$(dirname "$0")/.."
fail=0
# deps PKGDIR: every package PKGDIR/... depends on (exits non-zero when go list fails).
deps() {
  [ -d "$1" ] || return 0
  local out
  if ! out=$(go list -deps "./$1/..." 2>&1); then
    echo "import rule: go list ./$1/... failed:" >&2
    echo "$out" | head -5 >&2
    return 1
  fi
  printf '%s\n' "$out"
}
forbid() { # forbid PKGDIR REGEX WHY
  local list bad
  list=$(deps "$1") || { fail=1; return; }
  bad=$(printf '%s\n' "$list" | grep -E "$2" | sort -u | head -5 || true)
  if [ -n "$bad" ]; then echo "import rule: $1 must not import $(echo $bad) ($3)"; fail=1; fi
}
ui='^(charm\.land/|github\.com/charmbracelet/|github\.com/NimbleMarkets/)'
forbid kernels '^llmbench/(engine|workloads|profiles|tui)' "kernels imports nothing in-module"
forbid engine '^llmbench/(workloads|profiles|tui)' "engine never imports workloads, profiles or tui"
forbid workloads '^llmbench/(profiles|tui)' "workloads sit below profiles and tui"
forbid profiles '^llmbench/tui' "profiles sit below tui"
for p in kernels engine workloads profiles; do forbid "$p" "$ui" "only tui/ imports UI libraries"; done
# Package main's own imports: the job layer, not the pieces it wires.
if ! direct=$(go list -f '{{join .Imports "\n"}}' . 2>&1); then
  echo "import rule: go list . failed:"; echo "$direct" | head -5; fail=1
elif bad=$(printf '%s\n' "$direct" | grep -E '^llmbench/workloads/(serving|micro)$'); then
  echo "import rule: package main imports $(echo $bad) directly (it talks to workloads/jobs)"; fail=1
fi
# gorgonia.org/cu exits from init() without a GPU: only the cuda build may link it.
if ! all=$(go list -deps . 2>&1); then
  echo "import rule: go list -deps . failed:"; echo "$all" | head -5; fail=1
elif printf '%s\n' "$all" | grep -q '^gorgonia.org/cu'; then
  echo "import rule: the default build links gorgonia.org/cu"; fail=1
fi
[ "$fail" = 0 ] && echo "import rules: ok"
exit "$fail"
