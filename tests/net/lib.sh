# Shared by the net tests and benchmarks/fabric-targets: runs Myriad ranks in the host namespaces of a fabric
# (tests/net/fabric), one rank per host, meeting through torchrun-style variables at rank 0's management
# address; data goes over the fabric (MYRIAD_SOCKET_IFNAME=eth0).
# Invariant: every process a function starts is waited for or killed before it returns.

NET_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
FABRIC="$NET_DIR/fabric"

# run_ranks FABRIC OUTDIR "HOST HOST ..." TIMEOUT CMD...: rank r runs CMD in host r; per-rank environment
# from RANK_ENV_<r> (a string of VAR=value words). Output in OUTDIR/rank<r>.log. Returns 0 if all exit 0.
run_ranks() {
  local fab=$1 out=$2 hosts=($3) limit=$4
  shift 4
  local n=${#hosts[@]} r port pids=()
  port=$((29000 + RANDOM % 2000))
  local master
  master=$("$FABRIC" mgmt-addr "$fab" "${hosts[0]}")
  mkdir -p "$out"
  for ((r = 0; r < n; r++)); do
    local extra="RANK_ENV_$r"
    # shellcheck disable=SC2086
    env RANK=$r WORLD_SIZE=$n LOCAL_RANK=0 MYRIAD_COMM_ID="$master:$port" MYRIAD_SOCKET_IFNAME=eth0 ${!extra:-} \
      timeout "$limit" ip netns exec "$("$FABRIC" ns "$fab" "${hosts[$r]}")" "$@" >"$out/rank$r.log" 2>&1 &
    pids+=($!)
  done
  local rc=0
  for ((r = 0; r < n; r++)); do
    if ! wait "${pids[$r]}"; then
      echo "net: rank $r on host ${hosts[$r]} failed; its log:" >&2
      tail -20 "$out/rank$r.log" >&2
      rc=1
    fi
  done
  return $rc
}

# spine_bytes FABRIC LEAF: bytes each spine received from LEAF, one per line, in spine order.
spine_bytes() {
  "$FABRIC" counters "$1" | awk -v l="l$2" '$2 == l {print $3}'
}

# perf_ok LOG: the perf binary checked its results and found none wrong (rank 0 prints the footer; every
# rank exits non-zero on a wrong value, which run_ranks reports).
perf_ok() {
  grep -q "Out of bounds values : 0 OK" "$1"
}
