#!/usr/bin/env bash
# Proves that `cmake --install` makes a usable package: installs a built Tack into a fresh prefix,
# checks what was installed, builds tests/consumer against it with find_package(Tack), runs it on
# examples/kernels.py and runs the installed `tack info`. Neither program gets LD_LIBRARY_PATH: the
# RPATHs must be enough.
#
#   tests/consumer/run.sh BUILD_DIR WORK_DIR
#
# BUILD_DIR is a built Tack build tree; WORK_DIR is emptied and then holds the prefix, the consumer's
# build and (unless TACK_CACHE_DIR is set) the kernel cache. Optional environment: CMAKE (the cmake
# to use), CMAKE_GENERATOR and CXX (for the consumer), TACK_INSTALL_CONFIG (cmake --install --config).
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 BUILD_DIR WORK_DIR" >&2
  exit 2
fi
src="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$(cd "$1" && pwd)"
work="$2"
cmake="${CMAKE:-cmake}"

rm -rf "$work"
mkdir -p "$work"
work="$(cd "$work" && pwd)"
prefix="$work/prefix"
# The caller's cache directory when it sets one (scripts/test does), else one of our own, so that the
# check neither reads nor fills the user's cache.
export TACK_CACHE_DIR="${TACK_CACHE_DIR:-$work/cache}"
unset LD_LIBRARY_PATH

fail() {
  echo "run.sh: $*" >&2
  exit 1
}

echo "== cmake --install $build --prefix $prefix"
config_args=()
[[ -n "${TACK_INSTALL_CONFIG:-}" ]] && config_args=(--config "$TACK_INSTALL_CONFIG")
"$cmake" --install "$build" --prefix "$prefix" "${config_args[@]}"

echo "== checking the installed files"
[[ -f "$prefix/include/tack/tack.hpp" ]] || fail "no include/tack/tack.hpp in the prefix"
[[ -x "$prefix/bin/tack" ]] || fail "no bin/tack in the prefix"
config="$(find "$prefix" -path '*/cmake/Tack/TackConfig.cmake' -print -quit)"
[[ -n "$config" ]] || fail "no cmake/Tack/TackConfig.cmake in the prefix"
for f in TackConfigVersion.cmake TackTargets.cmake; do
  [[ -f "$(dirname "$config")/$f" ]] || fail "no $f next to $config"
done
# The public headers include the standard library and each other, nothing else (nothing of src/).
for h in "$prefix"/include/tack/*.hpp; do
  while read -r inc; do
    [[ "$inc" == tack/*.hpp && -f "$prefix/include/$inc" ]] ||
      fail "$(basename "$h") includes \"$inc\", which is not an installed Tack header"
  done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$h")
done
# Nothing installed may point back into the source or build tree.
if grep -rlF -e "$src/" -e "$build/" "$prefix/include" "$(dirname "$config")"; then
  fail "installed files above name the source or build tree"
fi
if command -v readelf >/dev/null; then
  for bin in "$prefix"/bin/tack "$prefix"/lib*/libtack.so*; do
    [[ -L "$bin" ]] && continue
    rpath="$(readelf -d "$bin" | sed -n 's/.*(R[UN]*PATH).*\[\(.*\)\]/\1/p')"
    echo "$(basename "$bin"): RUNPATH ${rpath:-none}"
    [[ "$rpath" != *"$build"* ]] || fail "$bin still has the build tree in its RUNPATH"
  done
fi

echo "== configuring and building tests/consumer against the prefix"
# The user package registry is off, so that only the prefix can provide Tack.
"$cmake" -S "$src/tests/consumer" -B "$work/build" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF \
  -DTACK_EXAMPLES_DIR="$src/examples"
tack_dir="$(sed -n 's/^Tack_DIR:[A-Z]*=//p' "$work/build/CMakeCache.txt")"
[[ "$tack_dir" == "$prefix"/* ]] || fail "find_package(Tack) found $tack_dir, not the prefix"
"$cmake" --build "$work/build"

echo "== consumer $src/examples/kernels.py"
"$work/build/consumer" "$src/examples/kernels.py"

echo "== $prefix/bin/tack info"
"$prefix/bin/tack" info
