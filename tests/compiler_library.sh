#!/usr/bin/env bash
# LLVM is loaded only to compile (docs/backends.md, "The CPU backend"): libtack and the `tack` tool
# do not link it; a kernel in the disk cache runs without the compiler library, and without it a
# compile fails with an error that says what to do.
# Usage: compiler_library.sh TACK_BINARY LIBTACK
set -u
tack=$1
libtack=$2
fail() { echo "FAIL: $*"; exit 1; }
top=$(mktemp -d)
trap 'rm -rf "$top"' EXIT
kernel="$top/k.py"
printf 'import tack\n@tack.kernel\ndef twice(x, out):\n    for i in range(x.shape[0]):\n        out[i] = 2 * x[i]\n' >"$kernel"

# Neither links LLVM, directly or through another library.
for f in "$tack" "$libtack"; do
  deps=$(ldd "$f") || fail "ldd $f"
  ! echo "$deps" | grep -qi "libLLVM" || fail "$f needs LLVM: $deps"
done
dir=$(dirname "$libtack")
[ -f "$dir/libtack_cpu_compiler.so" ] || fail "no compiler library next to $libtack"
ldd "$dir/libtack_cpu_compiler.so" | grep -q "libLLVM" && echo "(the compiler library links libLLVM.so: TACK_STATIC_LLVM is off)"

# Compiled once with the compiler library, into a cache.
cache="$top/cache"
out=$(TACK_CACHE_DIR=$cache "$tack" run "$kernel" --args 'f32[8],f32[8]') || fail "run: $out"
echo "$out" | grep -q "sum=56" || fail "run: $out"

# libtack alone in a directory, found first through LD_LIBRARY_PATH: no compiler library beside it.
alone="$top/alone"
mkdir "$alone"
cp -P "$dir"/libtack.so* "$alone"/
# The cached kernel still runs.
out=$(LD_LIBRARY_PATH=$alone TACK_CACHE_DIR=$cache "$tack" run "$kernel" --args 'f32[8],f32[8]' 2>&1) ||
  fail "a cached kernel did not run without the compiler library: $out"
echo "$out" | grep -q "sum=56" || fail "run: $out"
# One that must be compiled fails, saying why and what to do; `tack info` still works.
out=$(LD_LIBRARY_PATH=$alone TACK_CACHE_DIR=$top/empty "$tack" run "$kernel" --args 'f32[8],f32[8]' 2>&1) &&
  fail "compiled without the compiler library: $out"
echo "$out" | grep -q "cannot compile: its compiler library $alone/libtack_cpu_compiler.so does not load" ||
  fail "message: $out"
echo "$out" | grep -q "reinstall Tack" || fail "message: $out"
LD_LIBRARY_PATH=$alone "$tack" info >/dev/null || fail "info without the compiler library"
echo "ok"
