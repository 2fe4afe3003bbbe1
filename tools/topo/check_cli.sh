#!/bin/sh
# myriad-topo end to end: every fixture prints a matrix, JSON and a graph; the NCCL_GRAPH_FILE is refused by
# name; --png writes a PNG; detection of this machine works; docs/topology.md shows the current output.
# usage: check_cli.sh MYRIAD_TOPO FIXTURE_DIR DOCS_TOPOLOGY_MD
set -eu
topo=$1 fixtures=$2 doc=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in "$fixtures"/*.xml; do
  name=$(basename "$f")
  if [ "$name" = azure-ncv4-a100pcie-nccl-graph.xml ]; then
    if "$topo" --file "$f" >/dev/null 2>"$tmp/err"; then echo "FAIL: $name loaded"; exit 1; fi
    grep -q "NCCL_GRAPH_FILE" "$tmp/err" || { echo "FAIL: $name: $(cat "$tmp/err")"; exit 1; }
    continue
  fi
  "$topo" --file "$f" >"$tmp/m" || { echo "FAIL: $name matrix"; exit 1; }
  grep -q "Legend" "$tmp/m" || grep -q "no GPUs and no NICs" "$tmp/m" || { echo "FAIL: $name: no matrix"; exit 1; }
  "$topo" --file "$f" --json | grep -q '"numaNodes"' || { echo "FAIL: $name json"; exit 1; }
  "$topo" --file "$f" --dot | grep -q '^graph topology {' || { echo "FAIL: $name dot"; exit 1; }
  "$topo" --file "$f" --nccl-xml | grep -q '<system version="1">' || { echo "FAIL: $name nccl-xml"; exit 1; }
done
"$topo" --file "$fixtures/oci-bm-gpu-h100-8-nccl-topo.xml" --png "$tmp/oci.png"
[ "$(head -c 4 "$tmp/oci.png" | od -An -c | tr -d ' ')" = "211PNG" ] || { echo "FAIL: --png wrote no PNG"; exit 1; }
"$topo" --json >"$tmp/here.json"
grep -q '"numaNodes": [1-9]' "$tmp/here.json" || { echo "FAIL: detection: $(cat "$tmp/here.json")"; exit 1; }
for f in oci-bm-gpu-h100-8-nccl-topo.xml hwloc-jureca-dc-gpu-4xa100-4xhdr.xml; do
  "$topo" --file "$fixtures/$f" | while IFS= read -r line; do
    grep -qxF -- "$line" "$doc" || { echo "FAIL: docs/topology.md lacks this line of $f (regenerate):"; echo "$line"; exit 1; }
  done
done
echo "myriad-topo: all fixtures, --png, detection and docs/topology.md checked"
