"""Makes the NVRTC of the `[cuda]` extra (the nvidia-cuda-nvrtc wheel) findable by the core.

The core loads NVRTC at run time by its library name; a wheel puts it in site-packages, where the
dynamic loader does not look. Loading it here first, globally, makes the core's load find it. Does
nothing when the wheel is not installed.
"""
import ctypes
import glob
import os

_PATTERNS = (
    "cu*/lib/libnvrtc.so*",
    "cuda_nvrtc/lib/libnvrtc.so*",
    "cu*/bin/nvrtc64_*.dll",
    "cuda_nvrtc/bin/nvrtc64_*.dll",
)


def preload():
    try:
        import nvidia  # the namespace package of NVIDIA's wheels
    except ImportError:
        return None
    for base in list(getattr(nvidia, "__path__", [])):
        for pattern in _PATTERNS:
            for path in sorted(glob.glob(os.path.join(base, pattern))):
                name = os.path.basename(path)
                if "builtins" in name or name.endswith(".alt.so"):
                    continue
                try:
                    ctypes.CDLL(path, mode=getattr(ctypes, "RTLD_GLOBAL", 0))
                except OSError:
                    continue
                os.environ.setdefault("TACK_NVRTC_LIBRARY", path)
                return path
    return None
