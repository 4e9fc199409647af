#!/usr/bin/env bash
# make screenshots: drives the real `llmbench tui --device fake` in tmux at 120×36 on the
# built-in stories260K model, captures every screen with its colours (capture-pane -e)
# and writes screenshots/NAME.svg (tools/ansi2svg) and screenshots/NAME.png (headless
# Chromium renders the SVG). Screens: setup, help, live (mid-run), results, compare
# (the run against a second one), history; then report.png, the HTML report of a
# serve-bench concurrency sweep. A screen the binary does not have yet, or
# that shows nothing, is reported and skipped; the script fails when a step it needs
# (Setup, a run, Results) does not appear.
set -euo pipefail
cd "$(dirname "$0")/.."
COLS=120 ROWS=36
OUT=${OUT:-screenshots}
PROMPTS=${PROMPTS:-200} RATE=${RATE:-40}

command -v tmux >/dev/null || { echo "screenshots: tmux is needed (apt-get install tmux)" >&2; exit 1; }
CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)}
[ -n "$CHROMIUM" ] || echo "screenshots: no chromium; writing SVG only (apt-get install chromium for PNG)" >&2

mkdir -p bin "$OUT"
go build -o bin/llmbench .
go build -o bin/ansi2svg ./tools/ansi2svg

work=$(mktemp -d)
sock="llmbench-shots-$$"
cleanup() { tmux -L "$sock" kill-server 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
# A fresh results store and home in $work, so the pictures never show the user's own
# runs or models.
tmux -L "$sock" -f /dev/null new-session -d -s tui -x "$COLS" -y "$ROWS" \
  "cd '$work' && env -u XDG_CACHE_HOME -u LLAMA_CACHE -u HF_HOME -u HF_HUB_CACHE -u OLLAMA_MODELS -u LLMBENCH_MODELS TERM=xterm-256color COLORTERM=truecolor HOME='$work/h' LLMBENCH_HOME='$work/home' XDG_DATA_HOME='$work/xdg' '$PWD/bin/llmbench' tui --device fake; sleep 600"

screen() { tmux -L "$sock" capture-pane -p -t tui; }
keys() { tmux -L "$sock" send-keys -t tui "$@"; }
# move_to KEY TEXT: press KEY (at most 30 times) until TEXT is on screen.
move_to() {
  for _ in $(seq 30); do
    screen | grep -qF -- "$2" && return 0
    keys "$1"
    sleep 0.3
  done
  wait_for "$2" 5
}
# wait_for TEXT SECONDS: until TEXT is on screen; non-zero (screen on stderr) when not.
wait_for() {
  local end=$((SECONDS + $2))
  while ! screen | grep -qF -- "$1"; do
    if [ "$SECONDS" -ge "$end" ]; then
      echo "screenshots: no \"$1\" on screen after $2 s:" >&2
      screen >&2
      return 1
    fi
    sleep 0.1
  done
}
# shot NAME TITLE: capture the pane as NAME.svg and NAME.png.
shot() {
  sleep 0.3 # let the frame settle
  tmux -L "$sock" capture-pane -e -p -t tui >"$work/$1.ansi"
  bin/ansi2svg -cols "$COLS" -rows "$ROWS" -title "$2" <"$work/$1.ansi" >"$OUT/$1.svg"
  if [ -n "$CHROMIUM" ]; then
    local w h
    w=$(sed -n 's/^<svg [^>]*width="\([0-9.]*\)".*/\1/p' "$OUT/$1.svg" | head -1)
    h=$(sed -n 's/^<svg [^>]*height="\([0-9.]*\)".*/\1/p' "$OUT/$1.svg" | head -1)
    timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-background-networking \
      --disable-component-update --no-first-run --user-data-dir="$work/chromium" --hide-scrollbars \
      --force-device-scale-factor=1 --default-background-color=00000000 \
      --window-size="${w%.*},${h%.*}" --screenshot="$PWD/$OUT/$1.png" "file://$PWD/$OUT/$1.svg" 2>/dev/null
  fi
  echo "screenshots: $OUT/$1.svg${CHROMIUM:+ and .png}"
}

wait_for "Estimated:" 20
shot setup "llmbench tui — Setup"

keys '?'
wait_for "Keys (" 5
shot help "llmbench tui — help (?)"
keys Escape
wait_for "Estimated:" 5

# A serve-bench run long enough to catch the Live screen mid-run: down to the workload
# row, serve-bench, then the prompts and rate fields (ctrl+u clears a field).
move_to Down "> kind"
keys Right
wait_for "◂ serve-bench ▸" 5
move_to Down "> prompts"
keys C-u "$PROMPTS"
move_to Down "> rate"
keys C-u "$RATE"
wait_for "Estimated: 1 point × $PROMPTS requests" 5
move_to Up "> kind" # off the text fields, so the picture shows the choice keys
keys Enter
wait_for "[Live]" 30
# Mid-run: wait for a third of the requests, so the charts have data.
end=$((SECONDS + 120))
until n=$(screen | sed -n "s|.* \([0-9]*\)/$PROMPTS requests.*|\1|p" | head -1) && [ -n "$n" ] && [ "$n" -ge $((PROMPTS / 3)) ]; do
  [ "$SECONDS" -lt "$end" ] || { echo "screenshots: the run did not get a third done in 120 s" >&2; screen >&2; exit 1; }
  sleep 0.2
done
shot live "llmbench tui — Live (serve-bench running)"
wait_for "✓ finished" 180
wait_for "[Results]" 5
shot results "llmbench tui — Results"

# Compare: run the same setup again (r), then compare it with the one before (c).
keys r
wait_for "[Live]" 30
wait_for "✓ finished" 180
keys c
sleep 1
if screen | grep -qF "[Compare]" && ! screen | grep -qF "Nothing to compare"; then
  shot compare "llmbench tui — Compare (two runs)"
else
  echo "screenshots: compare skipped: c on Results did not open a comparison:" >&2
  screen | tail -3 >&2
fi

# History: tab until it is the active screen.
for _ in 1 2 3 4 5 6; do
  screen | head -1 | grep -qF "[History]" && break
  keys Tab
  sleep 0.3
done
if screen | head -1 | grep -qF "[History]" && ! screen | grep -qF "no results store"; then
  shot history "llmbench tui — History"
else
  echo "screenshots: history skipped: the History screen has no results store" >&2
fi
keys q

# The HTML report of a small concurrency sweep (the top of the page: sweep table,
# throughput–latency curves, the first point's histograms).
if [ -n "$CHROMIUM" ]; then
  LLMBENCH_HOME="$work/home" bin/llmbench serve-bench --backend inproc --num-prompts 64 --random-input-len 64 \
    --random-output-len 32 --max-concurrency 1,4,16 --disable-tqdm --export "$work/report.html" >"$work/report.out" 2>&1
  timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-component-update --no-first-run --user-data-dir="$work/chromium" --hide-scrollbars \
    --force-device-scale-factor=1 --window-size=1280,1240 --screenshot="$PWD/$OUT/report.png" "file://$work/report.html" 2>/dev/null
  echo "screenshots: $OUT/report.png (serve-bench --export report.html)"
fi
ls -la "$OUT"
