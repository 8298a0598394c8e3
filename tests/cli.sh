#!/usr/bin/env bash
# The `tack` tool's own behaviour: --version, help, unknown subcommands named, `run --device`, a
# bad number in --args as a clear error (exit 1, "tack: ..."), never a crash, and texture kernels
# emitted for every GPU target without its device (`--args 'tex3d,...'`).
# Usage: cli.sh TACK_BINARY
set -u
tack=$1
fail() { echo "FAIL: $*"; exit 1; }
top=$(mktemp -d)
trap 'rm -rf "$top"' EXIT
export TACK_CACHE_DIR=$top/cache
kernel="$top/k.py"
printf 'import tack\n@tack.kernel\ndef twice(x, out):\n    for i in range(x.shape[0]):\n        out[i] = 2 * x[i]\n' >"$kernel"

out=$("$tack" --version) || fail "--version"
echo "$out" | grep -Eq '^tack [0-9]+\.[0-9]+\.[0-9]+$' || fail "--version: $out"
out=$("$tack" --help) || fail "--help"
for sub in info emit run cache; do
  echo "$out" | grep -Eq "^  $sub +[a-z].{10,}$" || fail "no description of $sub: $out"
done
err=$("$tack" frobnicate 2>&1 >/dev/null); rc=$?
[ $rc = 2 ] && echo "$err" | grep -q "unknown subcommand 'frobnicate'" || fail "unknown: $rc $err"

out=$("$tack" run "$kernel" --args 'f32[4],f32[4]' --device cpu) || fail "run --device: $out"
echo "$out" | grep -q "^twice on cpu:0: first call" || fail "run --device: $out"

for args in 'f32[4x],f32[4]' 'f32[99999999999999999999],f32[4]' 'f32[-1],f32[4]' 'f32=1e,f32[4]' \
  'f32[,],f32[4]' 'f32[4000000000,4000000000,4000000000],f32[4]'; do
  err=$("$tack" run "$kernel" --args "$args" 2>&1 >/dev/null); rc=$?
  [ $rc = 1 ] && echo "$err" | grep -q "^tack: '" || fail "run --args '$args': exit $rc, $err"
done
err=$("$tack" emit "$kernel" --args 'f32[,3x],f32[]' 2>&1 >/dev/null); rc=$?
[ $rc = 1 ] && echo "$err" | grep -q "^tack: '3x' in 'f32\[,3x\]' is not a number" ||
  fail "emit: exit $rc, $err"

# Texture arguments: each target's handle type and sampling call; tex3d_exact samples in software.
vectors="$(dirname "$0")/kernels/vectors.py"
expect_emit() {  # backend, args, what the source must hold
  out=$("$tack" emit --backend "$1" "$vectors:march_volume" --args "$2") || fail "emit $1 $2: $out"
  echo "$out" | grep -q -- "$3" || fail "emit $1 '$2' has no '$3': $out"
}
expect_emit cuda 'tex3d,f32[,],i32' 'cudaTextureObject_t'
expect_emit cuda 'tex3d,f32[,],i32' 'tex3D<float>'
expect_emit hip 'tex3d,f32[,],i32' 'hipTextureObject_t'
expect_emit opencl 'tex3d,f32[,],i32' 'image3d_t'
expect_emit opencl 'tex3d,f32[,],i32' 'read_imagef'
expect_emit level_zero 'tex3d,f32[,],i32' 'image3d_t'
expect_emit metal 'tex3d,f32[,],i32' 'texture3d<float>'
out=$("$tack" emit --backend cuda "$vectors:march_volume" --args 'tex3d_exact,f32[,],i32') ||
  fail "emit tex3d_exact: $out"
echo "$out" | grep -q 'tex3D' && fail "tex3d_exact sampled in hardware: $out"
out=$("$tack" emit --backend opencl "$vectors:sample2d" --args 'tex2d,f32[,],f32[]') ||
  fail "emit tex2d: $out"
echo "$out" | grep -q 'image2d_t' || fail "emit tex2d has no image2d_t: $out"

# PoCL implements images: where it is the OpenCL here, textures are sampled by them, so that the
# texture tests on OpenCL test the hardware path (they would pass in software as well).
if [ -e /etc/OpenCL/vendors/pocl.icd ] && [ "${TACK_OPENCL_IMAGES:-1}" != 0 ]; then
  out=$(OCL_ICD_VENDORS=/etc/OpenCL/vendors/pocl.icd "$tack" info) || fail "info: $out"
  echo "$out" | grep -Eq '^opencl +available .* hardware +opencl' ||
    fail "PoCL's OpenCL reports no hardware textures: $out"
fi
echo "ok"
