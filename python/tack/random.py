"""tack.random: the kernel language's counter-based random numbers (seed, uniform, normal,
direction3), the same bits on every backend. They run only inside kernels."""
from ._builtins import Builtin

seed = Builtin("random.seed")
uniform = Builtin("random.uniform")
normal = Builtin("random.normal")
direction3 = Builtin("random.direction3")

__all__ = ["seed", "uniform", "normal", "direction3"]
