#!/usr/bin/env bash
# Tack's programs load their libraries only from where they were installed (or built) and from the
# system's directories, never from the directory they are run in: a library that another user
# plants there under the name of one they need is not loaded. (CMake gave the build tree's copies a
# RUNPATH padded with empty entries, which the dynamic loader reads as the working directory.)
# Usage: working_directory.sh PLANTED_LIBRARY PROGRAM_OR_LIBRARY... -- COMMAND...
set -u
planted=$1
shift
files=()
while [ "$1" != "--" ]; do files+=("$1"); shift; done
shift
fail() { echo "FAIL: $*"; exit 1; }
here=$(mktemp -d)
trap 'rm -rf "$here"' EXIT

# Each library the files need, by the name they ask for, planted in the working directory.
for f in "${files[@]}"; do
  dynamic=$(readelf -d "$f") || fail "readelf -d $f"
  echo "$dynamic" | grep -E '\((RUNPATH|RPATH)\)' | grep -Eq "\[:|::|:\]|\[\]" &&
    fail "$f has an empty entry in its library search path: $(echo "$dynamic" | grep PATH)"
  for needed in $(echo "$dynamic" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    cp "$planted" "$here/$needed"
  done
done
[ -n "$(ls "$here")" ] || fail "no library was planted"

out=$(cd "$here" && "$@" 2>&1) || fail "'$*' run in $here failed: $out"
echo "ok: $(ls "$here" | wc -l) planted libraries ($(ls "$here" | tr '\n' ' ')) were not loaded"
