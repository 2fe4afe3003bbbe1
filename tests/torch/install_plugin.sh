#!/usr/bin/env bash
# Installs the build into BUILD_DIR/torch-prefix and pip-installs plugins/torch against it and the torch of
# PYTHON, building from a copy so that the source tree stays clean. Usage: install_plugin.sh BUILD_DIR SOURCE_DIR PYTHON
set -euo pipefail
build=$1
src=$2
py=$3
prefix=$build/torch-prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
work=$build/torch-plugin-src
rm -rf "$work"
mkdir -p "$work"
cp -r "$src/plugins/torch/setup.py" "$src/plugins/torch/csrc" "$src/plugins/torch/torch_myriad" "$work/"
MYRIAD_PREFIX=$prefix MAX_JOBS=${MYRIAD_JOBS:-2} "$py" -m pip install --no-build-isolation --no-deps -q "$work"
cd "$build"  # not the source folder, so that the installed package is what imports
"$py" -c "import torch, torch_myriad; print('torch', torch.__version__, 'torch_myriad for myriad', torch_myriad.myriad_version)"
