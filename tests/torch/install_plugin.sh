#!/usr/bin/env bash
# Installs plugins/torch into PYTHON (a venv with torch and scikit-build-core) the way a user does, with one
# pip install that builds Myriad and the extension (pyproject.toml), from a copy of the source so that the
# tree stays clean. The copy keeps the files' times and the build folder stays in BUILD_DIR, so a rerun only
# rebuilds what changed; ccache is used when it is on PATH (paths relative to BUILD_DIR, so that another
# checkout hits the same entries). Usage: install_plugin.sh BUILD_DIR SOURCE_DIR PYTHON
set -euo pipefail
build=$1
src=$2
py=$3
work=$build/torch-plugin-src
rm -rf "$work"
mkdir -p "$work"
# What the wheel builds from: Myriad's library and tools' CMake files, and the plugin (not its build folders).
tar -C "$src" --exclude='plugins/torch/build*' -cf - CMakeLists.txt cmake include src transports algorithms tools \
  plugins/torch | tar -C "$work" -xf -
settings=(--config-settings=build-dir="$build/torch-plugin-build")
if command -v ccache >/dev/null; then
  settings+=(--config-settings=cmake.define.CMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR=$build
fi
start=$(date +%s)
CMAKE_BUILD_PARALLEL_LEVEL=${MYRIAD_JOBS:-2} "$py" -m pip install --no-build-isolation --no-deps -q "${settings[@]}" \
  "$work/plugins/torch"
echo "pip install of plugins/torch: $(($(date +%s) - start)) s"
cd "$build"  # not the source folder, so that the installed package is what imports
"$py" -m torch_myriad
