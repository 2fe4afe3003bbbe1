#!/usr/bin/env bash
# Runs one fuzz target: run_fuzz.sh BINARY SEEDS[:MORE_SEEDS] CORPUS [MAX_LEN]. The run reads the seeds and
# keeps what it finds in CORPUS; inputs are at most MAX_LEN bytes (8192). MYRIAD_FUZZ_RUNS=N runs N inputs, else MYRIAD_FUZZ_SECONDS (30).
# A crash, leak, sanitizer report or timeout fails the run; libFuzzer keeps the input (crash-*) beside it.
set -euo pipefail
bin=$1
seeds=$2
corpus=$3
max_len=${4:-8192}
mkdir -p "$corpus"
IFS=: read -ra dirs <<<"$seeds"
for d in "${dirs[@]}"; do
  [ -d "$d" ] || { echo "run_fuzz: no seed folder $d"; exit 1; }
done
if [ -n "${MYRIAD_FUZZ_RUNS:-}" ]; then
  limit=(-runs="$MYRIAD_FUZZ_RUNS")
else
  limit=(-max_total_time="${MYRIAD_FUZZ_SECONDS:-30}")
fi
cd "$(dirname "$corpus")"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
"$bin" "${limit[@]}" -timeout=10 -rss_limit_mb=2048 -max_len="$max_len" -print_final_stats=1 \
  "$corpus" "${dirs[@]}" >"$log" 2>&1 || status=$?
if [ $status != 0 ]; then
  tail -60 "$log"
  echo "run_fuzz: $(basename "$bin") FAILED (exit $status); the input is saved in $(dirname "$corpus")"
  exit 1
fi
runs=$(awk '/stat::number_of_executed_units/ {print $2}' "$log")
secs=$(awk '/Done [0-9]+ runs in/ {print $(NF-1)}' "$log")
echo "run_fuzz: $(basename "$bin"): ${runs:-?} inputs in ${secs:-?} s, 0 crashes; corpus $(ls "$corpus" | wc -l) files"
