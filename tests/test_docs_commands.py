"""Every ``hsw2v`` command of the guides' shell blocks runs as written, in a real
process, in the order a reader meets them: pages in the site's order, after the
Quick start's ``hsw2v train corpus.txt``, in one directory holding the files the
commands name (a smaller slice of the bundled corpus, shards of it, held-out and
new text). A command that needs what no test here may reach (another host's
cluster, a path on it) is listed in ``ELSEWHERE`` with the reason."""
from __future__ import annotations

import gzip
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.helpers import REPO, SHARED_DATA, hsw2v_command

ELSEWHERE = {
    "dask scheduler --host 10.0.0.1": "another host's address: a cluster not on this machine",
    "dask worker tcp://10.0.0.1:8786": "another host's address",
    "hsw2v train /shared/shards/": "a cluster's shared file system and scheduler",
}
"""Command prefixes that are not run, and why."""


def _nav_pages(nav) -> list[str]:
    """The site's pages, in its order."""
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, dict):
        return [p for v in nav.values() for p in _nav_pages(v)]
    return [p for item in nav for p in _nav_pages(item)]


def shell_commands(page: Path) -> list[str]:
    """The ``hsw2v`` command lines of a page's ``sh``/``console`` blocks (a console
    block's ``$ `` lines only), trailing comments removed."""
    commands = []
    for kind, block in re.findall(r"```(sh|console|bash)\n(.*?)```", page.read_text(), re.S):
        for line in block.splitlines():
            if kind == "console":
                if not line.startswith("$ "):
                    continue
                line = line[2:]
            line = re.sub(r"\s+#\s.*$", "", line).strip()
            if line and not line.startswith("#") and re.search(r"(^|[|;]\s*)(hsw2v|dask) ", line):
                commands.append(line)
    return commands


def documented_commands() -> list[tuple[str, str]]:
    """(page, command) for every page of the site, in the site's order."""
    nav = yaml.safe_load((REPO / "mkdocs.yml").read_text())["nav"]
    return [(page, command) for page in _nav_pages(nav) if not page.startswith("benchmarks/")
            for command in shell_commands(REPO / "docs" / page)]


def _lay_out(work: Path) -> None:
    """The files the guides' commands read: a corpus, shards, held-out and new text,
    word-pair sets (from ../shared/data, if there)."""
    with gzip.open(REPO / "data" / "enwiki-1m.txt.gz", "rt", encoding="utf-8") as f:
        lines = f.read().splitlines(keepends=True)
    (work / "corpus.txt").write_text("".join(lines[:150]))
    (work / "new-text.txt").write_text("".join(lines[150:200]))
    (work / "heldout.txt").write_text("".join(lines[-20:]))
    (work / "shards").mkdir()
    for i in range(4):
        with gzip.open(work / "shards" / f"part-{i}.gz", "wt", encoding="utf-8") as f:
            f.write("".join(lines[200 + 25 * i:225 + 25 * i]))
    for name in ("wordsim353.tsv", "simlex999.txt"):
        if (SHARED_DATA / name).exists():
            shutil.copy(SHARED_DATA / name, work / name)


def test_the_guides_list_their_commands():
    commands = documented_commands()
    pages = {page for page, _ in commands}
    assert {"guides/checkpoints.md", "guides/language-model.md", "guides/big-corpora.md",
            "guides/prediction.md", "guides/dask.md"} <= pages
    assert ("guides/checkpoints.md", "hsw2v train new-text.txt --init-model model.npz --epochs 2"
            ) in commands


@pytest.mark.newest_only
def test_every_command_of_the_guides_runs_as_written(tmp_path):
    if not (SHARED_DATA / "wordsim353.tsv").exists():
        pytest.skip("needs ../shared/data's word-pair sets for the commands guide's evaluate")
    work = tmp_path / "work"
    work.mkdir()
    _lay_out(work)
    bin_dir = tmp_path / "bin"  # `hsw2v` as the tests run it, first on PATH
    bin_dir.mkdir()
    (bin_dir / "hsw2v").write_text("#!/bin/sh\nexec " + " ".join(hsw2v_command()) + ' "$@"\n')
    (bin_dir / "hsw2v").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    ran, failed = [], []
    for page, command in [("README.md", "hsw2v train corpus.txt --quiet"), *documented_commands()]:
        if any(command.startswith(prefix) for prefix in ELSEWHERE):
            continue
        done = subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=work, env=env,
                              capture_output=True, text=True, timeout=600)
        ran.append(command)
        if done.returncode != 0 or "Traceback" in done.stderr:
            failed.append(f"{page}: {command}\n    {done.stderr.strip()[-400:]}")
    assert not failed, "\n".join(failed)
    assert len(ran) >= 15
