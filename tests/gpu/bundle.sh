#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/gpu/bundle.sh - carry a gsched build to a GPU machine that has none of its Debian
# packages (docs/gpu.md): builds gsched from this source tree in DIR/build with the run path
# $ORIGIN/lib (the task shim is the daemon's own binary, exec'd with an empty environment, so
# LD_LIBRARY_PATH would not reach it), then copies the binary to DIR/gsched and every shared
# library it links, except the C library's own, into DIR/lib/.  The GPU libraries (libcuda,
# libnvidia-ml) are never bundled: gsched loads them at run time from the machine's driver.
# A build made against an older glibc (Debian 12: 2.36) runs on a newer one.
# usage: tests/gpu/bundle.sh DIR        (from the source tree; DIR/gsched is the binary)
set -eu
dir=$1
src=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$dir/lib"
cmake -S "$src" -B "$dir/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  '-DCMAKE_EXE_LINKER_FLAGS=-Wl,--disable-new-dtags,-rpath,$ORIGIN/lib' ${CMAKE_ARGS:-} > /dev/null
cmake --build "$dir/build" --target gsched -j "${JOBS:-2}" > /dev/null
cp "$dir/build/gsched" "$dir/gsched"
ldd "$dir/gsched" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | while read -r lib; do
  case $(basename "$lib") in
    libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | librt.so.* | libresolv.so.* | ld-linux*) ;;
    *) cp -L "$lib" "$dir/lib/" ;;
  esac
done
rm -rf "$dir/build"
du -sh "$dir" | awk '{print "bundle: " $1 " in '"$dir"' (run ./gsched)"}'
