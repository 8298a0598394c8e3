#!/usr/bin/env bash
# The wheel on its own: installed into a fresh virtual environment, every library that the
# extension, libtack and the compiler library load resolves inside the wheel or to the manylinux
# allow-list (never to /usr/lib/llvm-19, nothing missing), and the README's program, which
# compiles a kernel, runs with nothing mapped from LLVM's packages.
# Usage: wheel_check.sh WHEEL
set -u
wheel=$(realpath "$1")
root=$(cd "$(dirname "$0")/.." && pwd)
fail() { echo "FAIL: $*"; exit 1; }
top=$(mktemp -d)
trap 'rm -rf "$top"' EXIT
python3 -m venv "$top/venv" || fail "venv"
"$top/venv/bin/python" -m pip install -q --disable-pip-version-check "$wheel" || fail "pip install"
site=$("$top/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
# The manylinux allow-list's libraries that ours use; anything else must come from the wheel.
allowed='^(libc|libm|libdl|librt|libpthread|libstdc\+\+|libgcc_s|libz)\.so'
for lib in "$site"/tack/*.so; do
  out=$(env -u LD_LIBRARY_PATH ldd "$lib") || fail "ldd $lib"
  while read -r name _ path _; do
    case "$name" in linux-vdso.so.*|/lib*/ld-linux*) continue ;; esac
    [ "$path" = "not" ] && fail "$(basename "$lib"): $name not found"
    case "$path" in "$site"/*) continue ;; esac
    echo "$name" | grep -Eq "$allowed" || fail "$(basename "$lib"): $name resolves outside the wheel: $path"
  done <<<"$out"
  echo "$out" | grep -q "/usr/lib/llvm" && fail "$(basename "$lib") resolves to LLVM's packages: $out"
done
cat >"$top/program.py" <<'PY'
import numpy as np
import tack

@tack.kernel
def vector_add(x, y, out):
    for i in range(x.shape[0]):
        out[i] = x[i] + y[i]

x = tack.asarray(np.arange(1024, dtype=np.float32))
y = tack.ones((1024,))
out = tack.empty_like(x)
vector_add(x, y, out)
assert (out.numpy() == np.arange(1024, dtype=np.float32) + 1).all()
assert tack.cache_stats().compiles == 1
maps = open("/proc/self/maps").read()
assert "libtack_cpu_compiler" in maps, "the kernel was not compiled here"
assert "/usr/lib/llvm" not in maps, [l for l in maps.splitlines() if "/usr/lib/llvm" in l]
print("ran", out.numpy()[:4])
PY
(cd "$top" && env -u LD_LIBRARY_PATH -u PYTHONPATH TACK_CACHE_DIR="$top/cache" \
  "$top/venv/bin/python" program.py) || fail "the program"
(cd "$top" && "$top/venv/bin/tack" --version) || fail "the tack command"
(cd "$top" && env TACK_CACHE_DIR="$top/cache" "$top/venv/bin/python" -m tack info >"$top/info") ||
  fail "python -m tack info"
grep -q "^cpu  *available" "$top/info" || fail "info: $(cat "$top/info")"
echo "ok: $(basename "$wheel")"
