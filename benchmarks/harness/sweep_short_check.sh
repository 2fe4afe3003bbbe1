#!/bin/sh
# ctest bench_sweep_algorithms_short: the tuner's proof pipeline end to end at a tiny size (see
# benchmarks/CMakeLists.txt). $1: a scratch folder; MYRIAD_SWEEP_BUILD: the build folder.
set -eu
here=$(dirname "$0")/..
out=$1
build=$MYRIAD_SWEEP_BUILD
mkdir -p "$out"
"$here/sweep-algorithms" --build "$build" --layouts 3,4/2 --collectives all_reduce,alltoall \
  --bands 64:4K:8:5 --rounds 1 --json "$out/sweep.json" > "$out/table.md"
# Paired (the default): one run per layout and collective measured every algorithm at every size.
python3 - "$out/sweep.json" "$here" <<'EOF'
import collections, json, sys
sys.path.insert(0, sys.argv[2])
from harness.tuner import ALGORITHMS
seen = collections.defaultdict(set)
for r in json.load(open(sys.argv[1])):
    seen[(r["np"], r["hosts"], r["collective"], r["size"])].add(r["algo"])
bad = [(k, sorted(v)) for k, v in seen.items() if v != set(ALGORITHMS[k[2]])]
assert len(seen) == 12 and not bad, f"{len(seen)} points; missing algorithms: {bad}"
records = json.load(open(sys.argv[1]))
assert all(r.get("cores", 0) >= 1 for r in records), "records must say the cores the emulated hosts shared"
EOF
# Every measured point judged: one verdict line, and a table row per point and algorithm set.
grep -q "^the tuner's choice within 10 % of the best at [0-9]*/[0-9]* points" "$out/table.md"
rows=$(grep -c '^| [0-9] on ' "$out/table.md")
[ "$rows" -eq 12 ] || { echo "expected 12 table rows (2 layouts x 3 sizes x 2 collectives), got $rows"; exit 1; }
"$here/sweep-algorithms" --build "$build" --analyse "$out/sweep.json" > "$out/again.md"
cmp "$out/table.md" "$out/again.md"
"$here/fit-tuner" --build "$build" --passes 1 --fit shm.alpha_us,shm.overhead_us "$out/sweep.json" --out "$out/fit.txt"
MYRIAD_TUNER_FILE="$out/fit.txt" "$build/tools/myriad-info" --tune --coll all_reduce --ranks 4 --bytes 64 \
  | grep -q "<- chosen"
echo "sweep-algorithms: measured, judged, re-judged alike, fitted and read back"
