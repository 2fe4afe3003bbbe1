#!/usr/bin/env bash
# Installs the build into a temporary prefix, then builds and runs a consumer through find_package(myriad)
# and through pkg-config. Usage: check_install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
cmake -S "$src/tests/package/consumer" -B "$prefix/consumer" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$prefix/consumer" >/dev/null
LD_LIBRARY_PATH="$prefix/lib:$prefix/lib64:${LD_LIBRARY_PATH:-}" "$prefix/consumer/consumer"
pc_dir=$(dirname "$(find "$prefix" -name myriad.pc | head -1)")
cc "$src/tests/package/consumer/main.c" -o "$prefix/pc_consumer" $(PKG_CONFIG_PATH="$pc_dir" pkg-config --cflags --libs myriad)
LD_LIBRARY_PATH="$prefix/lib:$prefix/lib64:${LD_LIBRARY_PATH:-}" "$prefix/pc_consumer"
