#!/usr/bin/env bash
# make bench: the in-process batching sweep (issue 7): output tok/s at concurrency 16
# must be at least 1.8× concurrency 1 on synthetic llama-1b Q4_0 with 2 threads.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(./bin/llmbench serve-bench --backend inproc --model llama-1b --synthetic-type Q4_0 -t 2 --dataset-name random \
  --random-input-len 16 --random-output-len 128 --ignore-eos --max-concurrency 1,4,16 --num-prompts 32 --disable-tqdm)
printf '%s\n' "$out"
printf '%s\n' "$out" | awk -F: '/^Output token throughput \(tok\/s\):/ { v[n++] = $2 + 0 }
  END {
    if (n < 3) { print "batching sweep: expected 3 points, got " n; exit 1 }
    r = v[2] / v[0]
    printf "batching sweep: c=16 %.2f tok/s / c=1 %.2f tok/s = %.2fx (target >= 1.8x)\n", v[2], v[0], r
    if (r < 1.8) { print "batching sweep: FAIL: under 1.8x"; exit 1 }
  }'
