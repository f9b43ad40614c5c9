"""numba's cache, keyed on the package's sources: an edited step that a cached kernel
inlines from another file is compiled afresh, in a real process, not loaded stale;
and kept in the user's cache directory, never inside the package."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap

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
