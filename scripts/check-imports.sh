#!/usr/bin/env bash
# The import-direction rules of ../shared/docs/DESIGN.md §1:
#   kernels ← engine ← workloads/… ← profiles ← tui ← main
# and only tui/... may import the terminal UI libraries.
set -euo pipefail
cd "$(dirname "$0")/.."
fail=0
deps() { [ -d "$1" ] && go list -deps "./$1/..." 2>/dev/null || true; }
forbid() { # forbid PKGDIR REGEX WHY
  local bad
  bad=$(deps "$1" | grep -E "$2" | sort -u | head -5 || true)
  if [ -n "$bad" ]; then echo "import rule: $1 must not import $(echo $bad) ($3)"; fail=1; fi
}
ui='^(charm\.land/|github\.com/charmbracelet/|github\.com/NimbleMarkets/)'
forbid kernels '^llmbench/(engine|workloads|profiles|tui)' "kernels imports nothing in-module"
forbid engine '^llmbench/(workloads|profiles|tui)' "engine never imports workloads, profiles or tui"
forbid workloads '^llmbench/(profiles|tui)' "workloads sit below profiles and tui"
forbid profiles '^llmbench/tui' "profiles sit below tui"
for p in kernels engine workloads profiles; do forbid "$p" "$ui" "only tui/ imports UI libraries"; done
# gorgonia.org/cu exits from init() without a GPU: only the cuda build may link it.
bad=$(go list -deps . 2>/dev/null | grep '^gorgonia.org/cu' || true)
[ -z "$bad" ] || { echo "import rule: the default build links gorgonia.org/cu"; fail=1; }
[ "$fail" = 0 ] && echo "import rules: ok"
exit "$fail"
