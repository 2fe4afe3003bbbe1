# Installs what Myriad's build, tests and demo need on a fresh Debian machine (root, apt), once.
# Sourced by scripts/demo and scripts/test; a package already present costs one dpkg query.
# libpugixml-dev: topology files (src/topology/); openmpi-bin, libopenmpi-dev and libgloo-dev: the peer
# benchmarks (benchmarks/peers/); iperf3: the foreign flow of the emulated fabric (tests/net/fabric).
myriad_apt_packages=(cmake ninja-build g++ pkg-config libgtest-dev libgmock-dev libcli11-dev libhwloc-dev
                     libpugixml-dev clang-format iproute2 procps openmpi-bin libopenmpi-dev libgloo-dev iperf3)

myriad_install_deps() {
  local missing=()
  for p in "${myriad_apt_packages[@]}"; do
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
  cmake -S "$MYRIAD_ROOT" -B "$dir" -G Ninja "$@" >"$dir/configure.log" 2>&1 || { cat "$dir/configure.log"; return 1; }
  grep -A9 "Myriad .* configuration" "$dir/configure.log" | sed 's/^-- //'
  cmake --build "$dir" -j "${MYRIAD_JOBS:-2}"
}
