#!/usr/bin/env bash
# make bench: the in-process batching sweep (issue 7): output tok/s at concurrency 16
# must be at least 1.8× concurrency 1 on synthetic llama-1b Q4_0 with 2 threads.
# MODEL and TARGET change the shape and the bound (issue 17: MODEL=qwen3moe-tiny
# TARGET=1.5, experts shared across the batch). PROMPTS sets the number of requests
# per point (default 32; at least 16, the top concurrency). Run with LLMBENCH_CPU=avx2 it
# checks issue 12's AVX2 batched decode (the same 1.8× on the AVX2 kernels), with
# LLMBENCH_CPU=avxvnni the same on the AVX2 level's AVX-VNNI kernels (where the CPU has
# AVX-VNNI; AMD Zen 5, 16 prompts: c=16 166 tok/s against 133 with avx2).
set -euo pipefail
cd "$(dirname "$0")/.."
model=${MODEL:-llama-1b}
target=${TARGET:-1.8}
prompts=${PROMPTS:-32}
out=$(./bin/llmbench serve-bench --backend inproc --model "$model" --synthetic-type Q4_0 -t 2 --dataset-name random \
  --random-input-len 16 --random-output-len 128 --ignore-eos --max-concurrency 1,4,16 --num-prompts "$prompts" --disable-tqdm)
printf '%s\n' "$out"
printf '%s\n' "$out" | awk -F: -v target="$target" -v model="$model" -v level="${LLMBENCH_CPU:+, LLMBENCH_CPU=$LLMBENCH_CPU}" '/^Output token throughput \(tok\/s\):/ { v[n++] = $2 + 0 }
  END {
    if (n < 3) { print "batching sweep: expected 3 points, got " n; exit 1 }
    r = v[2] / v[0]
    printf "batching sweep (%s%s): c=16 %.2f tok/s / c=1 %.2f tok/s = %.2fx (target >= %sx)\n", model, level, v[2], v[0], r, target
    if (r < target + 0) { print "batching sweep: FAIL: under " target "x"; exit 1 }
  }'
