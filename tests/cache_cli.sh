#!/usr/bin/env bash
# `tack info` and `tack cache stats | ls | clear` say the truth about the disk cache: off and why
# for a directory others can write (with one warning) or one that is unusable, and what clear did.
# Usage: cache_cli.sh TACK_BINARY
set -u
tack=$1
fail() { echo "FAIL: $*"; exit 1; }
top=$(mktemp -d)
trap 'chmod -R u+rwx "$top" 2>/dev/null; rm -rf "$top"' EXIT
chmod 755 "$top"
kernel="$top/k.py"
printf 'import tack\n@tack.kernel\ndef twice(x, out):\n    for i in range(x.shape[0]):\n        out[i] = 2 * x[i]\n' >"$kernel"

# A directory every user can write: refused, said so once on stderr, and in stats and info.
shared="$top/shared"
mkdir -m 777 "$shared"
chmod 777 "$shared"
out=$(TACK_CACHE_DIR=$shared "$tack" cache stats 2>"$top/err") || fail "cache stats failed"
echo "$out" | grep -q "^enabled: no (.*is writable by .*chmod 700" || fail "stats: $out"
[ "$(grep -c 'warning: the kernel cache on disk is off' "$top/err")" = 1 ] || fail "warning: $(cat "$top/err")"
out=$(TACK_CACHE_DIR=$shared "$tack" info 2>/dev/null) || fail "info failed"
echo "$out" | grep -q "^cache: $shared (off: .*is writable by" || fail "info: $out"
out=$(TACK_CACHE_DIR=$shared "$tack" run "$kernel" --args 'f32[8],f32[8]' 2>/dev/null) || fail "run: $out"
[ -z "$(ls -A "$shared")" ] || fail "wrote into the shared directory: $(ls -A "$shared")"

# A private one: used; then a FIFO at an entry name is reported, and clear says what it removed.
mine="$top/mine"
TACK_CACHE_DIR=$mine "$tack" run "$kernel" --args 'f32[8],f32[8]' >/dev/null || fail "run"
[ "$(stat -c %a "$mine")" = 700 ] || fail "created with mode $(stat -c %a "$mine")"
out=$(TACK_CACHE_DIR=$mine "$tack" info) || fail "info"
echo "$out" | grep -q "^cache: $mine (on)" || fail "info: $out"
mkfifo "$mine/cpu-0123.tck"
out=$(TACK_CACHE_DIR=$mine timeout 60 "$tack" cache stats) || fail "stats hung or failed"
echo "$out" | grep -q "^enabled: yes$" || fail "stats: $out"
# Five entries: the kernel, the tack.algorithms sum that `tack run` prints of each array, the
# front-end record of each (front_end-*), and LLVM's description of this CPU (cpu_host-*,
# docs/backends.md).
echo "$out" | grep -q "^entries: 5$" || fail "stats: $out"
echo "$out" | grep -q "^unusable: 1 file" || fail "stats: $out"
out=$(TACK_CACHE_DIR=$mine timeout 60 "$tack" cache ls) || fail "ls"
# One line per entry (kernel, argument types, backend, size, age, file); the host's has no kernel.
[ "$(echo "$out" | grep -Ec '^twice +f32\[\], f32\[\] +cpu +[0-9]+ +[0-9]+[smhd]  cpu-[0-9a-f]+\.tck$')" = 1 ] &&
  [ "$(echo "$out" | grep -Ec '^twice +f32\[\], f32\[\] +front_end +[0-9]+ +[0-9]+[smhd]  front_end-[0-9a-f]+\.tck$')" = 1 ] &&
  [ "$(echo "$out" | grep -Ec '^- +- +cpu_host .* cpu_host-[0-9a-f]+\.tck$')" = 1 ] || fail "ls: $out"
out=$(TACK_CACHE_DIR=$mine timeout 60 "$tack" cache clear) || fail "clear: $out"
echo "$out" | grep -Eq "^removed 5 entries \([0-9]+ bytes\) and 1 leftover file from $mine" || fail "clear: $out"
[ -z "$(ls -A "$mine")" ] || fail "clear left: $(ls -A "$mine")"
out=$(TACK_CACHE_DIR=$mine "$tack" cache ls) || fail "ls"
[ "$out" = "the cache in $mine is empty" ] || fail "ls of an empty cache: $out"

# A directory that cannot be created: off, and why.
out=$(TACK_CACHE_DIR=$kernel/cache "$tack" cache stats 2>/dev/null) || fail "stats: $out"
echo "$out" | grep -q "^enabled: no (cannot create the cache directory $kernel/cache: Not a directory)" ||
  fail "stats of a directory that cannot be created: $out"

# Unusable for an unprivileged user (root ignores mode bits): off, and why.
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && as_nobody test -x "$tack"; then
  locked="$top/locked"
  mkdir "$locked"
  chown 65534:65534 "$locked"
  chmod 000 "$locked"
  out=$(HOME=/nonexistent TACK_CACHE_DIR=$locked as_nobody "$tack" cache stats 2>/dev/null) || fail "stats as nobody: $out"
  echo "$out" | grep -q "^enabled: no (cannot open the cache directory .*Permission denied" ||
    fail "stats as nobody: $out"
  # And root's directory is another user's for nobody: refused.
  out=$(HOME=/nonexistent TACK_CACHE_DIR=$mine as_nobody "$tack" cache stats 2>/dev/null) || fail "stats as nobody: $out"
  echo "$out" | grep -q "^enabled: no (.*is owned by root (uid 0), not by you" || fail "as nobody: $out"
else
  echo "skipped the unprivileged-user part: needs root, setpriv, and $tack runnable by nobody"
fi
echo "ok"
