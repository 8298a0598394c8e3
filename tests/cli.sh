#!/usr/bin/env bash
# The `tack` tool's own behaviour: --version, help, unknown subcommands named, `run --device`, and a
# bad number in --args as a clear error (exit 1, "tack: ..."), never a crash.
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
echo "ok"
