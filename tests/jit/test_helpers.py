"""hsw2v.jit.helpers: word2vec.c's generator, FNV-1a, ASCII whitespace and copying
against plain Python, the prefetch intrinsic, and a kernel's copies (``with_globals``,
``specialised``) and its compilation for one vector size (``for_dim``), loaded from
numba's cache in a fresh process."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from numba import njit, types

from hsw2v.jit import helpers

from tests.helpers import REPO

MASK = (1 << 64) - 1


def fnv1a_reference(data: bytes) -> int:
    """64-bit FNV-1a as its authors publish it (offset basis, prime), in Python ints."""
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & MASK
    return h


def test_lcg_is_word2vecs_generator():
    """``lcg_next`` is word2vec.c's ``next_random * 25214903917 + 11`` modulo 2^64, and
    ``lcg_uniform`` the state's high 24 bits over 2^24, in [0, 1)."""
    r, state = 1, np.uint64(1)
    for _ in range(2000):
        r = (r * 25214903917 + 11) & MASK
        state = np.uint64(helpers.lcg_next(state))
        assert int(state) == r
        u = helpers.lcg_uniform(state)
        assert float(u) == (r >> 40) / 2**24 and 0.0 <= u < 1.0


def test_fnv1a_matches_the_published_hash():
    """The FNV authors' test values, and any slice of random bytes as the reference
    hashes the same bytes."""
    assert fnv1a_reference(b"") == 0xCBF29CE484222325
    assert fnv1a_reference(b"a") == 0xAF63DC4C8601EC8C
    assert fnv1a_reference(b"foobar") == 0x85944171F73967E8
    for text in (b"", b"a", b"foobar"):
        assert int(helpers.fnv1a(np.frombuffer(text, np.uint8), 0, len(text))) == fnv1a_reference(text)
    rng = np.random.default_rng(0)
    buf = rng.integers(0, 256, 500).astype(np.uint8)
    for _ in range(200):
        lo, hi = sorted(int(x) for x in rng.integers(0, len(buf) + 1, 2))
        assert int(helpers.fnv1a(buf, lo, hi)) == fnv1a_reference(buf[lo:hi].tobytes())


def test_is_space_is_what_bytes_split_splits_on():
    """Every byte value: whitespace exactly where Python's ``bytes.split()`` sees it."""
    for c in range(256):
        assert helpers.is_space(np.uint8(c)) == (len((b"a" + bytes([c]) + b"b").split()) == 2), c


def test_copy_items_is_a_slice_assignment():
    @njit
    def copy(dst, at, src, lo, hi):
        helpers.copy_items(dst, at, src, lo, hi)

    rng = np.random.default_rng(1)
    src = rng.integers(0, 1000, 50)
    for at, lo, hi in ((0, 0, 50), (7, 3, 9), (20, 10, 10), (49, 0, 1)):
        dst, want = np.zeros(60, np.int64), np.zeros(60, np.int64)
        want[at:at + hi - lo] = src[lo:hi]
        copy(dst, at, src, lo, hi)
        assert np.array_equal(dst, want)


def test_prefetch_emits_a_prefetch_instruction_and_changes_nothing():
    """prefetch_row compiles to the CPU's prefetch instruction, one per 64-byte line
    of the row, and leaves the matrix as it was."""
    from numba import njit

    @njit
    def touch(syn0, row):
        helpers.prefetch_row(syn0, row)

    syn0 = np.random.default_rng(1).normal(size=(5, 100)).astype(np.float32)
    before = syn0.copy()
    touch(syn0, np.int64(4))
    assert np.array_equal(syn0, before)
    asm = next(iter(touch.inspect_asm().values())).lower()
    assert "prefetch" in asm or "prfm" in asm


SCALE: int
"""A stand-in, as the package's ``NODE_BIAS``: defined only in a copy's globals."""


def _stand_in(x):
    raise AssertionError("the stand-in itself ran")


def _twice_plus_one(x):
    return 2 * _stand_in(x) + 1


@njit(inline="always")
def _scaled(x):
    return x * SCALE


@njit(inline="always")
def _scaled_plus_one(x):
    return _scaled(x) + 1


@njit(inline="always")
def _no_stand_in(x):
    return x - 1


def _outer(x):
    return _scaled_plus_one(x) * 10


def test_with_globals_copies_a_function_that_calls_other_names():
    """The copy calls what it is given by name; the original still calls its own, and
    the copy keeps the original's code, name and module (numba's cache key)."""
    copy = helpers.with_globals(_twice_plus_one, _stand_in=lambda x: x * x)
    assert copy(5) == 51 and copy(-3) == 19
    with pytest.raises(AssertionError, match="stand-in itself"):
        _twice_plus_one(5)
    assert copy.__code__ is _twice_plus_one.__code__
    assert (copy.__name__, copy.__qualname__, copy.__module__) == (
        _twice_plus_one.__name__, _twice_plus_one.__qualname__, _twice_plus_one.__module__)


def test_specialised_replaces_a_stand_in_through_inlined_calls():
    """A stand-in read two inlined calls down takes each copy's value; a function that
    reads none comes back as it is; a plain function's copy calls the copies."""
    for scale in (3, -7):
        copy = helpers.specialised(_scaled_plus_one, SCALE=scale)
        assert copy is not _scaled_plus_one
        assert copy.targetoptions.get("inline") == "always"  # the original's options
        assert [copy(x) for x in (0, 1, 5)] == [x * scale + 1 for x in (0, 1, 5)]
        outer = njit(helpers.specialised(_outer, SCALE=scale))
        assert outer(4) == (4 * scale + 1) * 10
    assert helpers.specialised(_no_stand_in, SCALE=3) is _no_stand_in
    with pytest.raises(Exception, match="SCALE"):  # the original has no value to read
        _scaled_plus_one(1)


def test_for_dim_compiles_the_size_as_a_constant():
    """The entry point computes what the Python function does; it is compiled for the
    size as a literal; asking without compiling finds it once compiled, and nothing for
    another size (a kernel that numba does not cache)."""
    @njit
    def scaled_sum(a, dim):
        return a.sum() * dim

    a = np.arange(6, dtype=np.float32)
    assert helpers.for_dim(scaled_sum, a, 4, compile=False) is None
    entry = helpers.for_dim(scaled_sum, a, 4)
    assert entry(a, 4) == scaled_sum.py_func(a, 4) == 60.0
    [sig] = scaled_sum.signatures
    assert sig[-1] == types.literal(4)
    assert helpers.for_dim(scaled_sum, a, 4, compile=False) is entry
    assert helpers.for_dim(scaled_sum, a, 5, compile=False) is None


PROBE = '''
from numba import njit


@njit(cache=True)
def scaled_sum(a, dim):
    return a.sum() * dim
'''

LOAD = '''
import sys
import numpy as np
from hsw2v.jit.helpers import for_dim
from probe_kernel import scaled_sum

a = np.arange(6, dtype=np.float32)
for step in sys.argv[1:]:
    how, dim = step.split(":")
    entry = for_dim(scaled_sum, a, int(dim), compile=how == "compile")
    print("none" if entry is None else entry(a, int(dim)))
'''


def test_for_dim_loads_a_kernel_from_numbas_cache_in_a_fresh_process(tmp_path):
    """Without compiling, a fresh process gets the kernel that an earlier one compiled
    into numba's cache (and nothing for a size never compiled)."""
    (tmp_path / "probe_kernel.py").write_text(PROBE)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)]),
           "NUMBA_CACHE_DIR": str(tmp_path / "cache")}

    def run(*steps: str) -> list[str]:
        done = subprocess.run([sys.executable, "-c", LOAD, *steps], capture_output=True,
                              text=True, env=env, cwd=tmp_path, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout.split()

    assert run("load:4", "compile:4") == ["none", "60.0"]
    assert run("load:4", "load:5") == ["60.0", "none"]
