#!/usr/bin/env bash
# The same bench run headless and in the TUI (tmux), alternating, N times each
# (default 3): prints each run's tokens/s and the medians. Issue 6: the TUI may cost
# at most 10 % (the Live screen must never slow the run). Needs tmux and bin/llmbench.
# Usage: scripts/tui-vs-headless.sh [N] [SHAPE] [TYPE]   (default 3 llama-small Q4_0)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-3} shape=${2:-llama-small} typ=${3:-Q4_0}
bin=$PWD/bin/llmbench
work=$(mktemp -d)
trap 'tmux -L tvh kill-server 2>/dev/null || true; rm -rf "$work"' EXIT
cat > "$work/p.yaml" <<YAML
schema: 1
name: tui-vs-headless
runs:
  - name: $shape-$typ
    device: none
    bench:
      models:
        - {shape: $shape, type: $typ}
      n_prompt: [512]
      n_gen: [128]
      n_threads: [2]
      repetitions: 5
YAML
runs() { { find "$1/runs" -mindepth 1 -maxdepth 1 -type d 2>/dev/null || true; } | wc -l; }
for i in $(seq 1 "$n"); do
  LLMBENCH_HOME=$work/h "$bin" run "$work/p.yaml" --headless >/dev/null 2>&1
  before=$(runs "$work/t")
  tmux -L tvh new-session -d -s tv -x 120 -y 36 "LLMBENCH_HOME=$work/t $bin run $work/p.yaml"
  for _ in $(seq 1 1200); do
    sleep 0.5
    if [ "$(runs "$work/t")" -gt "$before" ] && [ -f "$(ls -d "$work"/t/runs/*/ | tail -1)/result.json" ]; then
      break
    fi
  done
  tmux -L tvh send-keys -t tv q; sleep 1; tmux -L tvh kill-server 2>/dev/null || true
done
python3 - "$work" <<'PY'
import glob, json, statistics, sys
work = sys.argv[1]
def runs(home):
    out = []
    for d in sorted(glob.glob(home + "/runs/*/")):
        r = json.load(open(d + "result.json"))
        row = {}
        for rec in r["bench"]["records"]:
            toks = rec["n_prompt"] + rec["n_gen"]
            name = "pp%d" % rec["n_prompt"] if rec["n_gen"] == 0 else "tg%d" % rec["n_gen"]
            row[name] = statistics.mean(toks / (ns / 1e9) for ns in rec["samples_ns"])
        out.append(row)
    return out
h, t = runs(work + "/h"), runs(work + "/t")
for k in sorted(h[0]):
    hv, tv = [r[k] for r in h], [r[k] for r in t]
    mh, mt = statistics.median(hv), statistics.median(tv)
    print(f"{k}: headless {' '.join('%.1f' % v for v in hv)} t/s (median {mh:.1f}); "
          f"TUI {' '.join('%.1f' % v for v in tv)} t/s (median {mt:.1f}); TUI vs headless {100 * (mt - mh) / mh:+.1f} %")
PY
