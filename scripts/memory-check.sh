#!/usr/bin/env bash
# make bench: the memory lines of issue 12 on synthetic llama-1b Q4_0 with 2 threads.
#  1. bench's peak RSS (pp512 + tg128) at most 1.15× the weights plus the KV cache: the
#     weights are tiled at load and the mapped file's pages given back, not kept twice.
#  2. No first-request pause in serve-bench: at concurrency 1, with no ready-check
#     request before the run, the first request's TTFT within 20 % of the second's.
set -euo pipefail
cd "$(dirname "$0")/.."
fail=0
# One JSON line per test (pp512, tg128): each test's own peak, its own KV cache.
while read -r json; do
  num() { grep -o "\"$1\": *[0-9.e+-]*" <<<"$json" | head -1 | sed 's/.*: *//'; }
  rss=$(num peak_rss_bytes) size=$(num model_size) kv=$(num kv_cache_bytes) np=$(num n_prompt) ng=$(num n_gen)
  awk -v r="$rss" -v w="$size" -v k="$kv" -v t="$([ "$np" -gt 0 ] && echo "pp$np" || echo "tg$ng")" 'BEGIN {
    x = r / (w + k)
    printf "memory-check: %s peak RSS %.1f MiB / (weights %.1f MiB + KV cache %.1f MiB) = %.3fx (target <= 1.15x)\n", t, r / 2^20, w / 2^20, k / 2^20, x
    exit !(x <= 1.15)
  }' || { echo "memory-check: peak RSS: FAIL"; fail=1; }
done < <(./bin/llmbench bench --shape llama-1b --type Q4_0 -p 512 -n 128 -t 2 -r 1 -o jsonl 2>/dev/null)
res=$(mktemp)
trap 'rm -f "$res"' EXIT
./bin/llmbench serve-bench --backend inproc --model llama-1b --synthetic-type Q4_0 -t 2 --dataset-name random \
  --random-input-len 128 --random-output-len 16 --ignore-eos --max-concurrency 1 --num-prompts 4 \
  --ready-check-timeout-sec 0 --disable-tqdm --save-result --save-detailed --result-filename "$res" >/dev/null 2>&1
ttfts=$(grep -o '"ttfts": *\[[^]]*\]' "$res" | sed 's/.*\[//; s/\]//; s/,/ /g')
awk -v t="$ttfts" 'BEGIN {
  n = split(t, v, " ")
  if (n < 2) { print "memory-check: serve-bench gave " n " TTFTs"; exit 1 }
  x = v[1] / v[2]
  printf "memory-check: serve-bench c=1, first request TTFT %.1f ms / second %.1f ms = %.2fx (target <= 1.20x; all: %s s)\n", v[1] * 1000, v[2] * 1000, x, t
  exit !(x <= 1.2)
}' || { echo "memory-check: first-request TTFT: FAIL"; fail=1; }
exit $fail
