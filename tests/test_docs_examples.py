"""The docs' notebook page runs: its Python blocks, in order, in one namespace, in a
fresh process (as a notebook's cells would), from a scratch directory, which holds
no checkout's ``data/``: the page reads the bundled corpus as any install can."""
from __future__ import annotations

import re
import subprocess
import sys

from tests.helpers import REPO

PAGE = REPO / "docs" / "guides" / "python.md"


def test_the_python_guide_runs_as_a_notebook(tmp_path):
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.DOTALL)
    assert len(blocks) >= 5
    script = "\n".join(blocks)
    result = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                            text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout
    assert "holds whitespace" in out  # the error block printed its message
    assert (tmp_path / "tree.png").stat().st_size > 10_000
    assert (tmp_path / "vectors.kv").exists()
    # the neighbours printed by hsw2v and by gensim are the same
    lists = re.findall(r"^\[\('.*\)\]$", out, re.MULTILINE)
    assert re.findall(r"'(\w+)'", lists[0]) == re.findall(r"'(\w+)'", lists[-1]), out
