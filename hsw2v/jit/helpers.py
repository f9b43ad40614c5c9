"""numba helpers that import nothing from the package: compile options, word2vec.c's
random generator, cache-prefetch intrinsics, byte hashing, compiling a kernel for
one vector size, and copying a kernel's template for one kind of caller."""
from __future__ import annotations

import types as pytypes

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

JIT = {"nogil": True, "fastmath": True, "cache": True}
"""Most kernels' options: runs without the GIL, with fastmath, compiled once and
cached on disk. Where fastmath would change results, :data:`EXACT` or :data:`IEEE`."""

KERNEL = {**JIT, "_nrt": False}
"""The training kernels' options: :data:`JIT` without numba's reference counting.
With it, every call that passes an array, and every row view, counts references
with atomic instructions on the arrays' shared counters (about fifty a CBOW word,
cache lines that every thread writes). The kernels allocate nothing: the caller
owns every array (the gain is on the kernels' benchmarks page)."""

EXACT = {"nogil": True, "cache": True}
"""For number formatting: fastmath would assume away the NaN and infinity checks."""

IEEE = {"nogil": True, "cache": True, "fastmath": {"nnan", "ninf", "nsz"}}
"""Arithmetic rounded as IEEE 754 says (no reassociation, no fused multiply-add,
no approximate reciprocals): the same bits on any CPU. Assuming no NaN lets
maxima vectorise."""

_LCG_MUL = np.uint64(25214903917)
_LCG_ADD = np.uint64(11)
FNV_OFFSET = np.uint64(14695981039346656037)
FNV_PRIME = np.uint64(1099511628211)


@njit(**JIT, inline="always")
def lcg_next(r):
    """Next state of word2vec.c's 48-bit-multiplier linear congruential generator."""
    return r * _LCG_MUL + _LCG_ADD


@njit(**JIT, inline="always")
def lcg_uniform(r):
    """A float in [0, 1) from the high 24 bits of a generator state."""
    return np.float32(r >> np.uint64(40)) * np.float32(1.0 / 16777216.0)


@njit(**JIT)
def fnv1a(buf, start, end):
    """FNV-1a hash of ``buf[start:end]``."""
    h = FNV_OFFSET
    for k in range(start, end):
        h = (h ^ np.uint64(buf[k])) * FNV_PRIME
    return h


@njit(**JIT, inline="always")
def copy_items(dst, at, src, lo, hi):
    """``dst[at:at + hi - lo] = src[lo:hi]`` as a loop: a slice assignment brings
    numba's shape-mismatch error and its string formatting (seconds of compile)."""
    for k in range(hi - lo):
        dst[at + k] = src[lo + k]


@njit(**JIT)
def is_space(c):
    """ASCII whitespace as Python's bytes.split() sees it: space, \\t, \\n, \\v, \\f, \\r."""
    return c == 32 or 9 <= c <= 13


@intrinsic
def prefetch_row(typingctx, matrix, row):
    """Ask the CPU to start loading ``matrix[row]`` (a 2-D C-contiguous array)
    into the cache to be written, every 64-byte line of it (``prefetchw``); a hint,
    with no effect on results. With write intent, a line another core wrote comes
    over once, for this core alone; read, it would come shared, and the write would
    then wait for the other core to give it up: on a VM whose two cores sat on
    different CCDs (a round trip of 330 ns between them, against 60), that second
    wait came at nearly every shared row the training steps wrote."""
    sig = types.void(matrix, row)

    def codegen(context, builder, signature, args):
        aryty, rowty = signature.args
        ary = context.make_array(aryty)(context, builder, args[0])
        zero = context.get_constant(types.intp, 0)
        index = context.cast(builder, args[1], rowty, types.intp)
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [index, zero])
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]),
            "llvm.prefetch.p0i8")
        base = builder.bitcast(ptr, i8p)
        itemsize = context.get_abi_sizeof(context.get_data_type(aryty.dtype))
        n_bytes = builder.mul(builder.extract_value(ary.shape, 1),
                              context.get_constant(types.intp, itemsize))
        with cgutils.for_range_slice(builder, context.get_constant(types.intp, 0), n_bytes,
                                     context.get_constant(types.intp, 64)) as (offset, _):
            builder.call(fn, [builder.gep(base, [offset]), i32(1), i32(3), i32(1)])
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def prefetch_item(typingctx, array, index):
    """Ask the CPU to start loading the cache line of ``array[index]`` (1-D); a hint."""
    sig = types.void(array, index)

    def codegen(context, builder, signature, args):
        aryty, indexty = signature.args
        ary = context.make_array(aryty)(context, builder, args[0])
        i = context.cast(builder, args[1], indexty, types.intp)
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [i])
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [ir.IntType(8).as_pointer()] +
                                            [ir.IntType(32)] * 3), "llvm.prefetch.p0i8")
        i32 = ir.IntType(32)
        builder.call(fn, [builder.bitcast(ptr, ir.IntType(8).as_pointer()), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return sig, codegen


def with_globals(fn, **names):
    """A copy of the plain Python function ``fn`` that sees ``names`` among its
    globals (the functions it calls by those names), for numba to compile: a
    kernel made for one kind of caller, with the callee inlined before typing and
    no closure, so that numba caches it like ``fn`` itself (same file and name; the
    argument types tell the copies apart)."""
    copy = pytypes.FunctionType(fn.__code__, {**fn.__globals__, **names}, fn.__name__,
                                fn.__defaults__)
    copy.__qualname__, copy.__module__, copy.__doc__ = fn.__qualname__, fn.__module__, fn.__doc__
    return copy


def _options(dispatcher) -> dict:
    """The options ``dispatcher`` was made with, as ``njit`` takes them."""
    return {k: v for k, v in dispatcher.targetoptions.items() if k != "nopython"}


def specialised(fn, **names):
    """``fn`` (a plain function or an ``inline="always"`` numba function) with
    ``names`` in place of the stand-ins it calls by those names, also inside the
    ``inline="always"`` numba functions it calls, copied likewise (see
    :func:`with_globals`); ``fn`` itself where none of them calls a stand-in.

    A kernel then holds only the steps its argument types need, chosen in Python:
    a numba ``overload`` choosing them by type is typed again at each of its call
    sites' typing passes (seconds of a first run's compile)."""
    memo: dict = {}

    def copy(f):
        if f in memo:
            return memo[f]
        memo[f] = f  # a recursive call keeps the original
        found = {}
        for name in f.__code__.co_names:
            if name in names:
                found[name] = names[name]
                continue
            callee = f.__globals__.get(name)
            if getattr(callee, "targetoptions", {}).get("inline") == "always":
                new = copy(callee.py_func)
                if new is not callee.py_func:
                    found[name] = njit(**_options(callee))(new)
        memo[f] = with_globals(f, **found) if found else f
        return memo[f]

    if hasattr(fn, "py_func"):
        new = copy(fn.py_func)
        return fn if new is fn.py_func else njit(**_options(fn))(new)
    return copy(fn)


def for_dim(kernel, *args, compile: bool = True):
    """``kernel`` compiled for ``args``, whose last one, the vector size, becomes a
    compile-time constant; call the result with arguments of the same types.
    Without ``compile``, only what numba's cache holds: the entry point loaded from
    it, or None where it would have to compile.

    The training kernels ask for that constant with ``numba.literally``. Called
    through the dispatcher, they would be typed again on every call (tens of
    milliseconds a block); the compiled entry point is called directly instead.
    """
    sig = tuple(kernel.typeof_pyval(a) for a in args[:-1]) + (types.literal(int(args[-1])),)
    if compile:
        kernel.compile(sig)
    elif not _load_cached(kernel, sig):
        return None
    return kernel.get_overload(sig)


def _load_cached(kernel, sig: tuple) -> bool:
    """Load ``kernel``'s compilation for ``sig`` from numba's cache, as
    ``Dispatcher.compile`` does before it compiles; whether it is loaded."""
    from numba.core.compiler_lock import global_compiler_lock

    with global_compiler_lock:
        if sig in kernel.overloads:
            return True
        try:
            cres = kernel._cache.load_overload(sig, kernel.targetctx)
        except Exception:  # noqa: BLE001 (an unreadable cache entry: numba compiles instead)
            return False
        if cres is None:
            return False
        kernel.targetctx.insert_user_function(cres.entry_point, cres.fndesc, [cres.library])
        kernel.add_overload(cres)
        return True
