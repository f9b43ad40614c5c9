"""The README in order on a new machine: ``pip install .``, a first ``train``, then
``pip uninstall`` and the Tests section's ``pip install -e``. numba's compiled
kernels go to the user's cache directory, so the uninstall leaves nothing of hsw2v
in site-packages (a leftover ``hsw2v/`` folder would import as a namespace package
and shadow the editable install), and the editable install then works.

A real virtualenv and real pip, in a real process; the venv sees this
environment's packages (numpy, numba, …), so that pip fetches only the build
backend, as for any ``pip install .``."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO


def _source(tmp: Path) -> Path:
    """A copy of what pip installs from, so that building writes nothing in the checkout."""
    source = tmp / "source"
    source.mkdir(parents=True)
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(REPO / name, source / name)
    for name in ("hsw2v", "data"):
        shutil.copytree(REPO / name, source / name, symlinks=True,
                        ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
    return source


def _run(args: list, env: dict, cwd: Path) -> subprocess.CompletedProcess:
    done = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, (args, done.stdout[-2000:], done.stderr[-3000:])
    return done


@pytest.mark.newest_only
def test_uninstall_leaves_nothing_and_an_editable_install_follows(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    python, bin_dir = venv / "bin" / "python", venv / "bin"
    site = Path(_run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                     os.environ, tmp_path).stdout.strip())
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME", "HSW2V_CACHE_DIR", "PYTHONPATH")}
    env.update(HOME=str(home), PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}",
               PIP_DISABLE_PIP_VERSION_CHECK="1")
    work = tmp_path / "work"
    work.mkdir()
    (work / "corpus.txt").write_text(" ".join(["the cat sat on the mat", "a dog ran"] * 300) + "\n")

    pip = [python, "-m", "pip", "install", "-q", "--no-deps"]
    _run([*pip, _source(tmp_path)], env, tmp_path)  # pip install .
    trained = _run([bin_dir / "hsw2v", "train", "corpus.txt", "--min-count", "1", "--dim", "8",
                    "--epochs", "1", "--threads", "1", "--quiet", "--no-cache"], env, work)
    assert trained.stderr == ""
    installed = site / "hsw2v"
    assert (installed / "jit" / "cache.py").is_file()  # a real install, not the checkout
    assert not list(installed.rglob("*.nb[ic]"))  # no compiled kernel inside the package
    kernels = home / ".cache" / "hsw2v" / "kernels"
    assert list(kernels.rglob("*.nbi")) and list(kernels.rglob("*.nbc"))  # they went here

    _run([python, "-m", "pip", "uninstall", "-y", "-q", "hsw2v-trainer"], env, tmp_path)
    assert not [p.name for p in site.iterdir() if p.name.lower().startswith("hsw2v")]

    editable = _source(tmp_path / "editable")
    _run([*pip, "-e", editable], env, tmp_path)
    where = _run([python, "-c", "import hsw2v.model.default_files, hsw2v; print(hsw2v.__file__)"],
                 env, work).stdout.strip()
    assert Path(where).parent == editable / "hsw2v"
    similar = _run([bin_dir / "hsw2v", "similar", "cat", "-n", "2"], env, work)
    assert len(similar.stdout.splitlines()) == 2
