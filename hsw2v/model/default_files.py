"""The files hsw2v writes and reads in the current directory when none is named, as
fastText and git users expect: ``hsw2v train corpus.txt`` writes vectors.txt and
model.npz, and ``hsw2v similar word`` reads them back."""
from __future__ import annotations

import os
import zipfile

from ..errors import HSW2VError
from .fasttext_format import MAGIC as FASTTEXT_MAGIC
from .word2vec_format import vector_formats

DEFAULT_VECTORS = vector_formats["text"].default_file
DEFAULT_MODEL = "model.npz"
"""Where ``train`` writes, and the other commands look, when no path is given:
the current directory, as fastText and git users expect."""


def default_vectors() -> str:
    """The vectors a command reads when none is named: the newest of the vector
    formats' default files (vectors.txt, vectors.bin) in the current directory, else
    model.npz."""
    found = [f.default_file for f in vector_formats.values()
             if f.write_rows is not None and os.path.isfile(f.default_file)]
    if found:
        return max(found, key=os.path.getmtime)
    if os.path.isfile(DEFAULT_MODEL):
        return DEFAULT_MODEL
    raise HSW2VError(f"no {DEFAULT_VECTORS} or {DEFAULT_MODEL} here: run 'hsw2v train CORPUS' "
                     "first, or give --vectors FILE")


def default_model(option: str = "--model FILE") -> str:
    """The model a command reads when none is named: model.npz in the current directory."""
    if os.path.isfile(DEFAULT_MODEL):
        return DEFAULT_MODEL
    raise HSW2VError(f"no {DEFAULT_MODEL} here: run 'hsw2v train CORPUS' first, or give {option}")


def check_default_output(path: str, what: str) -> None:
    """Refuse to replace ``path``, a default output name, unless it is hsw2v's own kind
    of file (a word2vec vectors file, or an hsw2v model): a default never silently
    overwrites something else the user keeps there."""
    if not os.path.lexists(path):
        return
    ours = False
    if os.path.isfile(path) and not os.path.islink(path):
        try:
            if what == "model":
                with zipfile.ZipFile(path) as z:
                    ours = {"meta.npy", "vectors.npy", "node_vectors.npy"} <= set(z.namelist())
            else:
                with open(path, "rb") as f:
                    header = f.readline(64)
                words = header.split()
                ours = (len(words) == 2 and all(h.isdigit() for h in words)) or header.startswith(
                    FASTTEXT_MAGIC.to_bytes(4, "little"))
        except (OSError, zipfile.BadZipFile):
            ours = False
    if not ours:
        option = "--save-model" if what == "model" else "-o/--output"
        raise HSW2VError(f"{path} exists and is not an hsw2v {what} file; not replacing it "
                         f"(give {option} to write elsewhere)")
