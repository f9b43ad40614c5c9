"""The README's language-model commands run as written on the Quick start's corpus
and give what the README shows: "states" after "the united"."""
from __future__ import annotations

import gzip
import re
import shlex
import subprocess

from tests.helpers import REPO, run_hsw2v


def test_the_readmes_language_model_commands(tmp_path):
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = readme[readme.index("## A language model"):]
    commands = [shlex.split(line[2:]) for line in block.splitlines() if line.startswith("$ hsw2v")]
    assert [c[1] for c in commands] == ["train", "predict", "score"], commands
    with gzip.open(REPO / "data" / "enwiki-1m.txt.gz", "rb") as f:  # the Quick start's corpus
        (tmp_path / "corpus.txt").write_bytes(f.read())
    split = next(line for line in block.splitlines() if line.startswith("head "))
    subprocess.run(["bash", "-c", split], cwd=tmp_path, check=True)
    outputs = []
    for command in commands:
        r = run_hsw2v(tmp_path, *command[1:])
        assert r.returncode == 0, r.stderr
        outputs.append(r.stdout)
    shown = re.search(r"\$ hsw2v predict.*\n(?:hsw2v: .*\n)?(\S+)\t", block).group(1)
    assert outputs[1].split()[0] == shown == "states"
    perplexity = float(re.search(r"perplexity: ([0-9.]+)", outputs[2]).group(1))
    assert 100 < perplexity < 1500  # (the README shows a run's figure; runs vary a little)
