"""Types of the kernel language's builtins (_builtins.py): each is a Builtin, which kernels call.
Kept equal to _builtins.py's names by tests/python/test_typing.py."""
from typing import Any


class Builtin:
    member: str
    def __init__(self, member: str) -> None: ...
    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...


SHADOWING: list[str]

sqrt: Builtin
rsqrt: Builtin
sin: Builtin
cos: Builtin
tan: Builtin
asin: Builtin
acos: Builtin
atan: Builtin
atan2: Builtin
sinh: Builtin
cosh: Builtin
tanh: Builtin
exp: Builtin
exp2: Builtin
log: Builtin
log2: Builtin
log10: Builtin
floor: Builtin
ceil: Builtin
trunc: Builtin
fma: Builtin
isnan: Builtin
isinf: Builtin
abs: Builtin
all: Builtin
any: Builtin
max: Builtin
min: Builtin
pow: Builtin
round: Builtin
dot: Builtin
cross: Builtin
length: Builtin
distance: Builtin
normalize: Builtin
mix: Builtin
clamp: Builtin
saturate: Builtin
smoothstep: Builtin
step: Builtin
fract: Builtin
sign: Builtin
reflect: Builtin
select: Builtin
vec2: Builtin
vec3: Builtin
vec4: Builtin
dvec2: Builtin
dvec3: Builtin
dvec4: Builtin
ivec2: Builtin
ivec3: Builtin
ivec4: Builtin
uvec2: Builtin
uvec3: Builtin
uvec4: Builtin
mat2: Builtin
mat3: Builtin
mat4: Builtin
dmat2: Builtin
dmat3: Builtin
dmat4: Builtin
transpose: Builtin
determinant: Builtin
inverse: Builtin
ndrange: Builtin
local_array: Builtin
local_array_like: Builtin
atomic_add: Builtin
atomic_sub: Builtin
atomic_min: Builtin
atomic_max: Builtin
atomic_and: Builtin
atomic_or: Builtin
atomic_xor: Builtin
atomic_exchange: Builtin
atomic_cas: Builtin
shared: Builtin
shared_like: Builtin
barrier: Builtin
thread_id: Builtin
group_id: Builtin
group_size: Builtin
block_sum: Builtin
block_min: Builtin
block_max: Builtin
block_scan: Builtin

__all__ = [
    "sqrt",
    "rsqrt",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "atan2",
    "sinh",
    "cosh",
    "tanh",
    "exp",
    "exp2",
    "log",
    "log2",
    "log10",
    "floor",
    "ceil",
    "trunc",
    "fma",
    "isnan",
    "isinf",
    "dot",
    "cross",
    "length",
    "distance",
    "normalize",
    "mix",
    "clamp",
    "saturate",
    "smoothstep",
    "step",
    "fract",
    "sign",
    "reflect",
    "select",
    "vec2",
    "vec3",
    "vec4",
    "dvec2",
    "dvec3",
    "dvec4",
    "ivec2",
    "ivec3",
    "ivec4",
    "uvec2",
    "uvec3",
    "uvec4",
    "mat2",
    "mat3",
    "mat4",
    "dmat2",
    "dmat3",
    "dmat4",
    "transpose",
    "determinant",
    "inverse",
    "ndrange",
    "local_array",
    "local_array_like",
    "atomic_add",
    "atomic_sub",
    "atomic_min",
    "atomic_max",
    "atomic_and",
    "atomic_or",
    "atomic_xor",
    "atomic_exchange",
    "atomic_cas",
    "shared",
    "shared_like",
    "barrier",
    "thread_id",
    "group_id",
    "group_size",
    "block_sum",
    "block_min",
    "block_max",
    "block_scan",
]
