"""numba's cache, keyed on the package's sources: an edited step that a cached kernel
inlines from another file is compiled afresh, in a real process, not loaded stale;
and kept in the user's cache directory, never inside the package."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from hsw2v.jit.cache import sources_stamp

from tests.helpers import REPO

STEP = '''
from numba import njit


@njit(inline="always")
def step():
    return {value}
'''

KERNEL = '''
from numba import njit

from ..jit import helpers  # noqa: F401 (applies the cache keys, as the package does)
from .step import step


@njit(cache=True)
def kernel():
    return step()
'''


def _probe_package(root):
    """A package of the package's ``jit`` and a ``steps`` subpackage whose cached
    kernel (``steps/kernel.py``) inlines a step from ``steps/step.py``."""
    package = root / "probe"
    shutil.copytree(REPO / "hsw2v" / "jit", package / "jit",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (package / "__init__.py").write_text("")
    (package / "steps").mkdir()
    (package / "steps" / "__init__.py").write_text("")
    (package / "steps" / "kernel.py").write_text(textwrap.dedent(KERNEL))
    return package


def _run_kernel(root):
    env = {**os.environ, "PYTHONPATH": str(root), "XDG_CACHE_HOME": str(root / "user-cache")}
    env.pop("NUMBA_CACHE_DIR", None)
    out = subprocess.run([sys.executable, "-c", "from probe.steps.kernel import kernel; print(kernel())"],
                         capture_output=True, text=True, env=env, cwd=root, timeout=300)
    assert out.returncode == 0, out.stderr
    return int(out.stdout)


def test_an_edited_inlined_step_is_not_loaded_from_the_cache(tmp_path):
    package = _probe_package(tmp_path)
    step = package / "steps" / "step.py"
    step.write_text(STEP.format(value=1))
    assert _run_kernel(tmp_path) == 1
    assert any((tmp_path / "user-cache" / "hsw2v" / "kernels").rglob("*.nbi"))  # cached there
    assert not any(package.rglob("*.nb[ic]"))  # and not in the package
    step.write_text(STEP.format(value=22))  # kernel.py itself unchanged
    assert _run_kernel(tmp_path) == 22


def test_the_stamp_covers_the_subpackages_files_only(tmp_path):
    package = _probe_package(tmp_path)
    (package / "steps" / "step.py").write_text(STEP.format(value=1))
    before = sources_stamp(str(package))
    (package / "top.py").write_text("x = 1\n")  # a top-level module holds no kernel
    assert sources_stamp(str(package)) == before
    (package / "steps" / "step.py").write_text(STEP.format(value=2))
    assert sources_stamp(str(package)) != before


FULL_DISK = '''
import errno, sys
from numba.core import caching
def full(self, *args, **kwargs):  # the cache's disk is full
    raise OSError(errno.ENOSPC, "No space left on device")
caching.IndexDataCacheFile.save = full
sys.argv = ["hsw2v", *sys.argv[1:]]
from hsw2v.cli import main
main()
'''


@pytest.mark.newest_only
def test_a_full_cache_directory_is_one_warning_and_a_working_run(tmp_path):
    """Hostile round five, item 13, in a real process: numba's writes to its cache
    fail with ENOSPC; the run warns once, naming the directory, and trains."""
    (tmp_path / "c.txt").write_text("a b c d e\nb c d e a\n" * 20)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "full")
    done = subprocess.run([sys.executable, "-c", FULL_DISK, "train", "c.txt", "--min-count", "1",
                           "--dim", "12", "--epochs", "1", "--threads", "1", "--quiet"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    warned = [ln for ln in done.stderr.splitlines() if ln.startswith("hsw2v: warning:")]
    assert len(warned) == 1 and "No space left on device" in warned[0], done.stderr
    assert f"to {tmp_path / 'full'} (" in warned[0] and "Traceback" not in done.stderr
    assert (tmp_path / "vectors.txt").read_text().startswith("5 12\n")
