#!/usr/bin/env bash
# The net tier (ctest label net, root): Myriad across network namespaces on an emulated leaf-spine fabric
# (tests/net/fabric). Scenarios: correct all-reduce and all-gather with 1, 2, 4 and 8 paths; our traffic
# leaves the spine that a foreign elephant sits on; a spine link cut mid-run stays correct. Exits 77 (skip)
# only when it cannot make namespaces (not root, or no netns support), and says so.
#   net_test.sh BUILD_DIR SCENARIO   (SCENARIO: paths | elephant | cut)
set -euo pipefail
build=$1
scenario=$2
. "$(dirname "$0")/lib.sh"
bin="$build/benchmarks"
if [ "$(id -u)" -ne 0 ]; then
  echo "net: SKIP: needs root for network namespaces"
  exit 77
fi
fab="mn$$"
if ! ip netns add "$fab-probe" 2>/dev/null; then
  echo "net: SKIP: cannot create network namespaces here"
  exit 77
fi
ip netns del "$fab-probe"
out=$(mktemp -d)
cleanup() {
  "$FABRIC" down "$fab" || true
  [ -n "${NET_KEEP:-}" ] && cp -r "$out" "$NET_KEEP"; rm -rf "$out"
}
trap cleanup EXIT
export MYRIAD_TIMEOUT_MS=20000 MYRIAD_DEBUG=${MYRIAD_DEBUG:-WARN}

case $scenario in
  paths)
    "$FABRIC" up "$fab" --leaves 2 --hosts 2 --spines 2 --rate 1gbit
    hosts="0.0 1.0 0.1 1.1"  # a ring that crosses the spines at every step
    for paths in 1 2 4 8; do
      for coll in all_reduce all_gather; do
        for size in 8 3M; do
          MYRIAD_NET_PATHS=$paths run_ranks "$fab" "$out/$paths-$coll-$size" "$hosts" 120 \
            "$bin/myriad_${coll}_perf" -b "$size" -e "$size" -n 2 -w 1 -c 1
          perf_ok "$out/$paths-$coll-$size/rank0.log" || {
            echo "net: $coll of $size with $paths paths: wrong values"
            cat "$out/$paths-$coll-$size/rank0.log"
            exit 1
          }
          echo "net: $coll $size bytes, $paths paths: correct on 4 ranks across 2 leaves"
        done
      done
    done
    ;;
  elephant)
    # Two hosts per leaf: ranks on x.0, the elephant between x.1. Rank 0's paths all start on spine 0,
    # where the elephant runs; adaptive multipath must move our bytes to spine 1.
    "$FABRIC" up "$fab" --leaves 2 --hosts 2 --spines 2 --rate 200mbit
    lport=$((30000 + RANDOM % 1000))
    ports=$("$FABRIC" probe "$fab" 0.0 1.0 "$lport" 0 5 | paste -sd, -)
    "$FABRIC" elephant "$fab" 0.1 1.1 0 30 "$out/elephant.json" >/dev/null
    sleep 1
    mapfile -t before < <(spine_bytes "$fab" 0)
    export MYRIAD_NET_LISTEN_PORT=$lport MYRIAD_NET_SEED=7 MYRIAD_NET_PATHS=4
    RANK_ENV_0="MYRIAD_NET_PORTS=$ports" run_ranks "$fab" "$out/run" "0.0 1.0" 120 \
      "$bin/myriad_sendrecv_perf" -b 96M -e 96M -n 1 -w 0 -c 1 --paths
    mapfile -t after < <(spine_bytes "$fab" 0)
    grep -h "^# " "$out/run/rank0.log" | grep -A12 "paths rank 0" || true
    # Spine 0 also carries the elephant (~200 Mbit/s while we run); spine 1 carries only us.
    a=$((after[0] - before[0]))
    b=$((after[1] - before[1]))
    echo "net: bytes from leaf 0 during the run: spine 0 (elephant's) $a, spine 1 $b"
    grep -q "re-paths" "$out/run/rank0.log" || { echo "net: no path telemetry printed"; exit 1; }
    [ "$b" -gt $((48 << 20)) ] || { echo "net: our traffic did not leave the elephant's spine"; exit 1; }
    ;;
  cut)
    "$FABRIC" up "$fab" --leaves 2 --hosts 2 --spines 2 --rate 300mbit
    hosts="0.0 1.0 0.1 1.1"
    (sleep 2 && "$FABRIC" link "$fab" 1 1 down && echo "net: spine 1's link to leaf 1 cut") &
    cutter=$!
    run_ranks "$fab" "$out/run" "$hosts" 180 "$bin/myriad_all_reduce_perf" -b 16M -e 16M -n 6 -w 1 -c 1 --paths
    wait $cutter
    perf_ok "$out/run/rank0.log" || { echo "net: wrong values after the cut"; cat "$out/run/rank0.log"; exit 1; }
    grep -h "quarantined" "$out/run/rank0.log" | head -3 || true
    echo "net: all-reduce correct on 4 ranks across a spine link cut mid-run"
    ;;
  *)
    echo "net: unknown scenario $scenario"
    exit 2
    ;;
esac
