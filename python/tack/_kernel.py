"""The decorators: @tack.kernel, @tack.func, tack.constant, and tack.inspect.

A decorated function is never run by Python. Its source text, its file and first line, and a
resolver that answers what each free name is bound to (from the function's closure and globals) go
to the C++ core, which parses, checks, specializes and compiles it at the first call, or takes that
work from the disk cache when a record of it holds the same text and the resolver's answers.
"""
from __future__ import annotations

import inspect as _inspect
import linecache as _linecache
import math as _math
import numbers
import sys
import types
from typing import TYPE_CHECKING, Any, Callable, Optional, cast

from . import _tack

_Kind = _tack.ExternalName.Kind
_INT64_MIN, _INT64_MAX, _UINT64_MAX = -(2**63), 2**63 - 1, 2**64 - 1

if TYPE_CHECKING:
    # The extension's Kernel is called through a type slot, which its stub cannot show.
    class Kernel(_tack.Kernel):
        def __call__(self, *args: Any) -> Any: ...
else:
    Kernel = _tack.Kernel


class constant:
    """A module-level constant a kernel may use: NAME = tack.constant(3.5) or
    tack.constant(7, dtype=tack.i64). Its value is baked in when a kernel is first compiled."""

    __slots__ = ("value", "dtype")

    def __init__(self, value: object, dtype: object = None) -> None:
        if isinstance(value, tuple):
            # A vector constant: 2 to 4 numbers.
            if not 2 <= len(value) <= 4:
                raise ValueError(f"tack.constant({value}): a vector constant has 2, 3 or 4 numbers")
            self.value = tuple(constant(v, dtype).value for v in value)
            self.dtype = None if dtype is None else _tack.dtype(dtype)
            return
        if isinstance(value, bool) or type(value).__name__ == "bool_":
            value = bool(value)
        elif isinstance(value, numbers.Integral):
            value = int(value)
            if not _INT64_MIN <= value <= _UINT64_MAX:
                raise ValueError(f"tack.constant({value}): an integer must fit in i64 or u64")
        elif isinstance(value, numbers.Real):
            value = float(value)
        else:
            raise TypeError(
                f"tack.constant takes a number, not {type(value).__name__}: write "
                "NAME = tack.constant(3.5) or tack.constant(7, dtype=tack.i64)"
            )
        self.value = value
        self.dtype = None if dtype is None else _tack.dtype(dtype)

    def __repr__(self):
        if self.dtype is None:
            return f"tack.constant({self.value!r})"
        return f"tack.constant({self.value!r}, dtype={self.dtype!r})"

    def __float__(self):
        return float(self.value)

    def __int__(self):
        return int(self.value)

    def __index__(self):
        if isinstance(self.value, float):
            raise TypeError("a float tack.constant is not an index")
        return int(self.value)

    def __bool__(self):
        return bool(self.value)


class Func:
    """A @tack.func: a device function, inlined where kernels call it. Not callable from the host."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.__wrapped__ = fn
        self.__name__ = fn.__name__
        self.__qualname__ = fn.__qualname__
        self.__module__ = fn.__module__
        self.__doc__ = fn.__doc__

    def __call__(self, *args, **kwargs):
        raise TypeError(
            f"{self.__name__} is a @tack.func: call it from a @tack.kernel or another "
            "@tack.func, not from the host"
        )

    def __repr__(self):
        return f"<tack.func {self.__qualname__}>"


def _remember_enclosing_scope(fn, frame):
    """A function decorated inside another function: its decorator (`@tack.kernel` after a local
    `import tack`) names things of the enclosing function's locals, which are neither the
    function's globals nor its closure. Remember those that a kernel's names can mean."""
    if frame is None or frame.f_locals is frame.f_globals:
        return
    if "__qualname__" in frame.f_locals and "__module__" in frame.f_locals:
        return  # a class body: its names are not visible in its methods
    scope = {
        name: value
        for name, value in frame.f_locals.items()
        if isinstance(value, (types.ModuleType, constant, Func, _tack.Kernel, _tack.DType))
        or _member_name(value) is not None
    }
    if scope:
        fn.__tack_scope__ = scope


def kernel(fn: Callable[..., Any]) -> Kernel:
    """Marks a kernel: compiled at its first call for its argument types (and cached in memory
    and on disk), then called with arrays and numbers: kernel(x, y, out)."""
    if not isinstance(fn, types.FunctionType):
        raise TypeError(f"@tack.kernel decorates a function, not {type(fn).__name__}")
    _remember_enclosing_scope(fn, sys._getframe(1))
    return cast(Kernel, _tack.Kernel(fn))


def func(fn: Any) -> Any:
    """Marks a device function that kernels (and other device functions) call. In a
    @tack.data_oriented class, a method (inlined with self) or, with @staticmethod, a static one."""
    if isinstance(fn, staticmethod):  # @tack.func above @staticmethod
        return staticmethod(func(fn.__func__))
    if not isinstance(fn, types.FunctionType):
        raise TypeError(f"@tack.func decorates a function, not {type(fn).__name__}")
    _remember_enclosing_scope(fn, sys._getframe(1))
    return Func(fn)


def inspect(k: _tack.Kernel, *args: object, mode: Optional[str] = None,
            backend: Optional[str] = None) -> str:
    """What kernel k becomes for these arguments' types: the typed IR (mode="ir"), the generated
    source ("source": LLVM IR on the CPU, CUDA C, HIP, OpenCL C, MSL) or the optimized code
    ("optimized", on the arguments' device only).

    Without `backend`, for the device the call would run on, and mode defaults to "ir". With
    `backend` ("cuda", "hip", "level_zero", "metal", "opencl"), for that backend with no device of
    it needed, as `tack emit --backend` prints it, and mode defaults to "source"."""
    if not isinstance(k, _tack.Kernel):
        raise TypeError(f"tack.inspect takes a @tack.kernel, not {type(k).__name__}")
    if mode is None:
        mode = "ir" if backend is None else "source"
    return k._inspect(args, mode, backend or "")


# ---- from a Python function to what the core needs ----


def _source_of(fn):
    """The function's source text (decorators included), file and first line."""
    code = fn.__code__
    # From the file's text: the core finds where the definition ends (inspect.getsourcelines, the
    # fallback, tokenizes: milliseconds at first). The core reads a plain UTF-8 file itself; a
    # file with a BOM, an encoding declaration or carriage returns, one linecache already holds
    # (it may have changed since) and a notebook cell are the text Python reads (linecache).
    source = _tack._definition_here(fn)
    if source is None:
        text = "".join(_linecache.getlines(code.co_filename, fn.__globals__))
        source = _tack._definition_at(text, code.co_firstlineno) if text else None
    if source is not None:
        return source, code.co_filename, code.co_firstlineno
    filename = _inspect.getsourcefile(fn) or code.co_filename
    try:
        lines, first = _inspect.getsourcelines(fn)
    except (OSError, TypeError) as e:
        message = (
            f"the source of '{fn.__qualname__}' is not available ({e}): a kernel must be "
            "defined in a file (or a notebook cell), not typed at an interactive prompt"
        )
        error = _tack.CompileError(message, (code.co_filename, code.co_firstlineno, 1, None))
        error.kernel, error.message, error.hint = fn.__name__, message, ""
        error.line, error.column = code.co_firstlineno, 1
        raise error from None
    return "".join(lines), filename, max(first, 1)


def _tack_members():
    """Identity of every object the tack namespace (and math's) exposes -> its name there."""
    import tack

    members = {}
    for module in (_math, tack.math, tack):  # tack last: its names win
        for name, value in vars(module).items():
            if name.startswith("_") or isinstance(value, types.ModuleType):
                continue
            if isinstance(value, (_tack.DType, tack._builtins.Builtin)) or callable(value) or (
                module is _math and isinstance(value, float)
            ):
                members[id(value)] = (value, getattr(value, "member", name))
    for value in vars(tack.random).values():
        if isinstance(value, tack._builtins.Builtin):
            members[id(value)] = (value, value.member)
    return members


_members_cache = None


def _member_name(value):
    global _members_cache
    if _members_cache is None:
        _members_cache = _tack_members()
    hit = _members_cache.get(id(value))
    return hit[1] if hit is not None and hit[0] is value else None


def _describe(value, functions):
    """The ExternalName for a value bound to a free name."""
    import tack

    n = _tack.ExternalName()
    if isinstance(value, constant):
        n.kind = _Kind.Constant
        n.dtype = "" if value.dtype is None else value.dtype.name
        if isinstance(value.value, tuple):
            n.components = [_describe(constant(v, value.dtype), functions)
                            for v in value.value]
            return n
        v = value.value
        if isinstance(v, bool):
            n.is_bool = True
            n.int_value = int(v)
        elif isinstance(v, int):
            if v > _INT64_MAX:
                n.is_big = True
                n.uint_value = v
            else:
                n.int_value = v
        else:
            n.is_float = True
            n.float_value = v
        return n
    if isinstance(value, (Func, _tack.Kernel)):
        fn = value.__wrapped__
        n.kind = _Kind.Function
        n.source, n.filename, n.first_line = _source_of(fn)
        functions.append(fn)
        return n
    if value is tack or value is tack.math:
        n.kind = _Kind.TackModule
        return n
    if value is _math:
        n.kind = _Kind.MathModule
        return n
    if isinstance(value, types.ModuleType):
        n.kind = _Kind.ForeignModule
        n.member = value.__name__
        return n
    member = _member_name(value)
    if member is not None and isinstance(value, float):
        # math.pi, math.e... bound to a name: read as literals, as math.pi is in a kernel.
        n.kind = _Kind.Constant
        n.is_float = True
        n.float_value = value
        return n
    if member is not None:
        n.kind = _Kind.TackMember
        n.member = member
        return n
    n.kind = _Kind.HostValue
    return n


_MISSING = object()
_NO_SCOPE: dict = {}


def _lookup(fn, name):
    """What `name` is bound to where fn was defined: its closure, then its globals. The binding's
    answer_here (python/bindings/kernel.cpp) follows the same order for the names it answers
    without Python (the tack module, names nothing binds): keep the two in step."""
    code = fn.__code__
    if fn.__closure__ and name in code.co_freevars:
        cell = fn.__closure__[code.co_freevars.index(name)]
        try:
            return cell.cell_contents
        except ValueError:  # an empty cell: not bound yet
            return _MISSING
    value = fn.__globals__.get(name, _MISSING)
    if value is _MISSING:  # getattr with a default would raise and catch AttributeError
        value = fn.__dict__.get("__tack_scope__", _NO_SCOPE).get(name, _MISSING)
    return value


def _names(fn):
    """The names fn's code mentions, and those of them that _lookup may find bound: in its
    closure, its globals or the enclosing scope it was decorated in. Set operations, not a _lookup
    per name."""
    code = fn.__code__
    mentioned = set(code.co_names).union(code.co_varnames)
    bound = fn.__globals__.keys() & mentioned
    bound.update(code.co_freevars)
    scope = fn.__dict__.get("__tack_scope__")
    if scope:
        bound.update(scope.keys() & mentioned)
    return mentioned, bound


def _make_resolver(fn):
    # Device functions called by the kernel may come from other modules: their names are looked up
    # where they were defined when the kernel's own scope does not bind them.
    functions = [fn]

    def resolve(name):
        known = len(functions)
        for f in functions:  # _describe may add to the list, but the loop ends there
            value = _lookup(f, name)
            if value is not _MISSING:
                described = _describe(value, functions)
                for g in functions[known:]:  # a function handed over: what its module binds
                    resolve.unbound -= _names(g)[1]
                return described
        # Unknown: a local, a builtin of the language (len, min...) or an error. None, not an
        # ExternalName, since most names a kernel mentions are its locals and each asks once.
        return None

    # Names the code mentions that nothing binds (its locals, range, len...): the core does not
    # ask about these, since each call into Python costs microseconds at a first call. Not the
    # names of decorators and annotations, which Python evaluates outside the function's code.
    mentioned, bound = _names(fn)
    resolve.unbound = mentioned - bound
    return resolve


def _build(fn, source_read=False):
    """(source, filename, first line, resolver) of fn; with source_read (the core read its
    definition from the file itself, as _source_of would have), only the resolver."""
    if source_read:
        return None, None, None, _make_resolver(fn)
    source, filename, first_line = _source_of(fn)
    return source, filename, first_line, _make_resolver(fn)


_tack._set_builder(_build)
