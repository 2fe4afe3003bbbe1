# Installs what Myriad's build, tests and demo need on a fresh Debian machine (root, apt), once. clang: the
# libFuzzer targets (scripts/fuzz).
# Sourced by scripts/demo and scripts/test; a package already present costs one dpkg query.
# libpugixml-dev: topology files (src/topology/); openmpi-bin, libopenmpi-dev and libgloo-dev: the peer
# benchmarks (benchmarks/peers/); iperf3 and matplotlib (pip, for the python3 on PATH): benchmarks/compare
# (iperf3 is also the foreign flow of the emulated fabric, tests/net/fabric); nftables: the net tier's cut-off
# host and dropped data path (tests/net/net_test.sh cutoff, stuck);
# nlohmann-json3-dev and graphviz: myriad-topo's --json and --png (tools/); doxygen: the API reference and its
# check (scripts/check-api-docs, ctest api_docs). libibverbs-dev builds the rdma transport; the rest runs its
# Soft-RoCE VM tier (tests/rdma: qemu boots Debian's kernel with rdma_rxe; perftest and tcpdump check the wire).
myriad_apt_packages=(cmake ninja-build g++ clang pkg-config libssl-dev libgtest-dev libgmock-dev libcli11-dev libhwloc-dev
                     libpugixml-dev clang-format iproute2 procps openmpi-bin libopenmpi-dev libgloo-dev iperf3
                     nftables nlohmann-json3-dev graphviz doxygen
                     libibverbs-dev rdma-core ibverbs-utils ibverbs-providers perftest rdmacm-utils
                     qemu-system-x86 kmod busybox-static cpio xz-utils tcpdump)
myriad_pip_modules=(matplotlib)
# What scripts/demo needs, and nothing more: the build, the perf binaries (CLI11), Open MPI beside them, and
# matplotlib for the plot (Debian's package: no pip on a fresh machine).
myriad_demo_packages=(cmake ninja-build g++ pkg-config libssl-dev libcli11-dev libhwloc-dev libpugixml-dev openmpi-bin
                      libopenmpi-dev python3-matplotlib)

myriad_install_deps() {
  myriad_install_apt
  local m
  for m in "${myriad_pip_modules[@]}"; do
    python3 -c "import $m" 2>/dev/null && continue
    echo "myriad: pip installing $m"
    python3 -m pip install -q "$m" 2>&1 | grep -v "^WARNING" || true
    python3 -c "import $m" || { echo "myriad: python3 cannot import $m after pip install" >&2; return 1; }
  done
}

# Installs the given apt packages (default: myriad_apt_packages, the whole test stack) that are missing.
myriad_install_apt() {
  local want=("$@")
  [ ${#want[@]} -eq 0 ] && want=("${myriad_apt_packages[@]}")
  local missing=()
  for p in "${want[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "myriad: installing ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}

# Configures and builds into $1 with the given extra CMake arguments.
myriad_build() {
  local dir=$1
  shift
  mkdir -p "$dir"
  local launcher=()  # ccache where the machine has it (not installed by default)
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  cmake -S "$MYRIAD_ROOT" -B "$dir" -G Ninja "${launcher[@]}" "$@" >"$dir/configure.log" 2>&1 || { cat "$dir/configure.log"; return 1; }
  # The summary: its heading, the "--   name : value" lines under it and the indented list of what is left out.
  awk '/Myriad .* configuration/ {on = 1; print; next} on && !/^(--   |    )/ {exit} on' "$dir/configure.log" |
    sed 's/^-- //'
  cmake --build "$dir" -j "${MYRIAD_JOBS:-2}"
}

# The torch tier's Python: a venv in $1 with torch pinned (on the project's machines 2.13.0 is a CPU wheel
# on local disk; an unpinned torch would download a CUDA build of several GB). Prints the interpreter.
myriad_torch_packages=(torch==2.13.0 pytest numpy scikit-build-core expecttest)
myriad_torch_venv() {
  local venv=$1
  if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv" >&2 || { echo "myriad: python3 -m venv failed (Debian: apt-get install python3-venv)" >&2; return 1; }
  fi
  if ! "$venv/bin/python" -c "import torch, pytest, numpy, scikit_build_core, expecttest; assert torch.__version__.startswith('2.13.0')" 2>/dev/null; then
    echo "myriad: installing ${myriad_torch_packages[*]} into $venv" >&2
    "$venv/bin/python" -m pip install -q "${myriad_torch_packages[@]}" 2>&1 | grep -v "^WARNING: Location" >&2 || true
    "$venv/bin/python" -c "import torch, pytest" >&2 || return 1
  fi
  echo "$venv/bin/python"
}
