"""The kernel language's builtins, as names of the tack module.

They exist so that kernels files import as plain Python (`from tack import ndrange, sqrt`) and so
that the resolver can tell the compiler which builtin a bound name means. They run only inside
kernels: called from the host, each one says so.
"""


class Builtin:
    """A builtin of the kernel language (tack.sqrt, tack.ndrange, tack.atomic_add...)."""

    __slots__ = ("member",)

    def __init__(self, member):
        self.member = member

    def __call__(self, *args, **kwargs):
        raise TypeError(
            f"tack.{self.member} is part of the kernel language: use it inside a @tack.kernel "
            "or @tack.func, not from the host"
        )

    def __repr__(self):
        return f"<tack builtin {self.member}>"


MATH = (
    "sqrt rsqrt sin cos tan asin acos atan atan2 sinh cosh tanh exp exp2 log log2 log10 floor "
    "ceil trunc fma isnan isinf"
).split()
# Builtins that share their name with Python's: tack.min etc., never star-imported.
SHADOWING = "abs all any max min pow round".split()
GLSL = "dot cross length distance normalize mix clamp saturate smoothstep step fract sign reflect select".split()
TYPES = [f"{p}{n}" for p in ("vec", "dvec", "ivec", "uvec") for n in (2, 3, 4)] + [
    f"{p}{n}" for p in ("mat", "dmat") for n in (2, 3, 4)
]
MATRIX = "transpose determinant inverse".split()
KERNEL = "ndrange local_array local_array_like".split()
ATOMICS = [
    f"atomic_{op}" for op in "add sub min max and or xor exchange cas".split()
]
WORKGROUP = (
    "shared shared_like barrier thread_id group_id group_size block_sum block_min block_max "
    "block_scan"
).split()

_names = MATH + SHADOWING + GLSL + TYPES + MATRIX + KERNEL + ATOMICS + WORKGROUP
for _name in _names:
    globals()[_name] = Builtin(_name)
del _name

__all__ = [n for n in _names if n not in SHADOWING]
