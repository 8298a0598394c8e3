"""Device classes: @tack.data_oriented, tack.template(), and what an object tells the core.

A kernel takes an object of a @tack.data_oriented class as an argument. At each call the core is
told the object's class (a handle made once per class: its name, __tack_iterate__, and a resolver
that answers, name by name, what the class's methods are), the class-level numbers read from the
live class (compile-time constants, part of the variant key) and the instance's attributes (arrays
and numbers become the kernel's arguments). Flattening and classifying them is the core's
(runtime/arguments.cpp), shared with C++.
"""
import inspect as _inspect
import numbers
import types
import weakref

from . import _tack
from ._kernel import Func, _build, _describe, constant

_MISSING = object()


def data_oriented(cls):
    """Marks a class whose objects kernels take as arguments: class-level numbers are compile-time
    constants, instance numbers run-time scalars, instance arrays arrays, @tack.func methods are
    inlined with self. Subclasses are device classes too."""
    if not isinstance(cls, type):
        raise TypeError(f"@tack.data_oriented decorates a class, not {type(cls).__name__}")
    _iterate_names(cls)  # checked now, where the class is written
    cls.__tack_data_oriented__ = True
    return cls


class template:
    """The annotation of a kernel parameter that takes an object (`cells: tack.template()`): it
    documents the parameter and changes nothing, since every parameter's type comes from the
    call."""

    def __repr__(self):
        return "tack.template()"


def _iterate_names(cls):
    if not hasattr(cls, "__tack_iterate__"):
        return []
    names = cls.__tack_iterate__
    if isinstance(names, str):
        names = (names,)
    if not (
        isinstance(names, (tuple, list))
        and 1 <= len(names) <= 3
        and all(isinstance(n, str) and n.isidentifier() for n in names)
    ):
        raise TypeError(
            f"class '{cls.__qualname__}': __tack_iterate__ names one to three attributes of its "
            'objects, fastest first: write __tack_iterate__ = ("n",) or ("nx", "ny")'
        )
    return list(names)


def _method(cls_ref, name):
    """What `name` is in the class, for the core: (kind, source, filename, first_line, resolver)
    with kind "method", "static", "kernel", "host" or "none"."""
    cls = cls_ref()
    raw = _MISSING if cls is None else _inspect.getattr_static(cls, name, _MISSING)
    kind, fn = "none", None
    if isinstance(raw, staticmethod):
        inner = raw.__func__
        kind, fn = ("static", inner) if isinstance(inner, Func) else ("host", None)
    elif isinstance(raw, Func):
        kind, fn = "method", raw
    elif isinstance(raw, _tack.Kernel):
        kind = "kernel"
    elif isinstance(raw, (classmethod, property, types.FunctionType)) or (
        raw is not _MISSING and callable(raw) and not isinstance(raw, type)
    ):
        kind = "host"
    if fn is None:
        return (kind, "", "", 1, None)
    source, filename, first_line, resolver = _build(fn.__wrapped__)
    return (kind, source, filename, first_line, resolver)


def _class_handle(cls):
    handle = cls.__dict__.get("__tack_class__")
    if handle is None:
        ref = weakref.ref(cls)
        handle = _tack.Class(cls.__qualname__, _iterate_names(cls), lambda name: _method(ref, name))
        type.__setattr__(cls, "__tack_class__", handle)
    return handle


def _function_handle(func):
    handle = func.__dict__.get("_tack_function")
    if handle is None:
        handle = _tack.Function(*_build(func.__wrapped__), func.__wrapped__.__name__)
        func._tack_function = handle
    return handle


def _is_method(value):
    return isinstance(
        value, (Func, staticmethod, classmethod, property, types.FunctionType, _tack.Kernel, type)
    )


def _is_number(value):
    return isinstance(value, numbers.Real) or type(value).__name__ == "bool_"


def _value(value):
    return _function_handle(value) if isinstance(value, Func) else value


def describe_object(obj):
    """(class handle, class-level constants as [(name, ExternalName)], attributes as
    [(name, value)]) of an object of a device class, for the core (python/bindings)."""
    cls = type(obj)
    instance = getattr(obj, "__dict__", {})
    attributes = [(name, _value(v)) for name, v in instance.items()]
    constants = []
    seen = set(instance)
    for klass in cls.__mro__:
        if klass is object:
            continue
        for name, value in vars(klass).items():
            if name in seen or name.startswith("__"):
                continue
            seen.add(name)
            if isinstance(value, types.MemberDescriptorType):  # a __slots__ entry
                value = getattr(obj, name, _MISSING)
                if value is not _MISSING:
                    attributes.append((name, _value(value)))
            elif isinstance(value, constant):
                constants.append((name, _describe(value, [])))
            elif _is_number(value):
                constants.append((name, _describe(constant(value), [])))
            elif not _is_method(value):
                attributes.append((name, _value(value)))  # an array shared by every object...
    return _class_handle(cls), constants, attributes
