"""Reading model and vectors files (:func:`load_model`, :func:`read_vectors`): a
model file (see :mod:`hsw2v.model.model` for its arrays) is read without
unpickling, every member's declared size checked before it is read, and every
array and setting checked before use; a bad file is one line naming it."""
from __future__ import annotations

import json
import os
import zipfile

import numpy as np

from ..counting.vocab import Vocab
from ..errors import HSW2VError
from ..settings import TrainSettings
from ..system.files import check_regular_file
from ..system.memory import available_memory
from ..training.kinds import model_kind
from ..trees.tree import Tree
from .model import KIND_MATRIX, MODEL_FORMAT, MODEL_VERSION, Model
from .vectors import Vectors
from .word2vec_format import read_word2vec

MAX_INFLATION = 100
"""A member may inflate at most this many times: models are written uncompressed,
and float vectors barely compress; a zip bomb inflates a thousandfold."""
_MODEL_ARRAYS = {
    "meta": np.uint8, "words": np.uint8, "word_offsets": np.int64, "counts": np.int64,
    "children": np.int32, "vectors": np.float32, "node_vectors": np.float32,
}
_OPTIONAL_ARRAYS = {"extra_leaves": np.int32, "ngram_vectors": np.float32}

def _declared_shapes(path: str) -> dict[str, tuple[int, ...]]:
    """Each member's shape as its ``.npy`` header declares it, read from the zip
    without inflating the data, after checking dtypes, shapes against each other,
    and the total against the memory available: a small file that would inflate
    to gigabytes is refused before it is read."""
    shapes = {}
    try:
        with zipfile.ZipFile(path) as z:
            names = set(z.namelist())
            missing = sorted(k for k in _MODEL_ARRAYS if k + ".npy" not in names)
            if missing:
                raise HSW2VError(f"{path}: not an hsw2v model (missing {', '.join(missing)})")
            present = {k: t for k, t in _OPTIONAL_ARRAYS.items() if k + ".npy" in names}
            present.update({k[:-4]: np.float32 for k in sorted(names)
                            if k.startswith(KIND_MATRIX) and k.endswith(".npy")})
            for k, dtype in {**_MODEL_ARRAYS, **present}.items():
                info = z.getinfo(k + ".npy")
                if info.file_size > max(MAX_INFLATION * info.compress_size, 1 << 20):
                    raise HSW2VError(f"{path}: {k} would inflate {info.compress_size} bytes to "
                                     f"{info.file_size}; not a model hsw2v wrote")
                with z.open(k + ".npy") as f:
                    version = np.lib.format.read_magic(f)
                    read = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                            else np.lib.format.read_array_header_2_0)
                    shape, fortran, declared = read(f)
                if declared != np.dtype(dtype).newbyteorder("<") or fortran:
                    order = " in Fortran order" if fortran else ""
                    raise HSW2VError(f"{path}: corrupt model ({k} is {declared}{order}, "
                                     f"not C-order {np.dtype(dtype)})")
                shapes[k] = tuple(int(x) for x in shape)
    except HSW2VError:
        raise
    except FileNotFoundError:
        raise HSW2VError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise HSW2VError(f"{path}: is a directory") from None
    except Exception as e:  # noqa: BLE001 (zipfile raises many kinds on a damaged file)
        raise HSW2VError(f"{path}: not an hsw2v model file ({_one_line(e)})") from None
    if len(shapes["counts"]) != 1 or shapes["counts"][0] < 2:
        raise HSW2VError(f"{path}: corrupt model (counts has shape {shapes['counts']})")
    if len(shapes["vectors"]) != 2 or shapes["vectors"][1] < 1:
        raise HSW2VError(f"{path}: corrupt model (vectors has shape {shapes['vectors']})")
    v, d = shapes["counts"][0], shapes["vectors"][1]
    extra = shapes.get("extra_leaves", (0,))
    leaves = v + (extra[0] if len(extra) == 1 else 0)
    expected = {"meta": shapes["meta"][:1], "words": shapes["words"][:1], "word_offsets": (v + 1,),
                "counts": (v,), "children": (leaves - 1, 2), "vectors": (v, d),
                "node_vectors": (leaves - 1, d)}
    if "extra_leaves" in shapes:
        expected["extra_leaves"] = (leaves - v,)
    if shapes["node_vectors"] == (leaves - 1, d + 1):  # with node biases
        expected["node_vectors"] = (leaves - 1, d + 1)
    for k, shape in expected.items():
        if shapes[k] != shape:
            raise HSW2VError(f"{path}: corrupt model ({k} has shape {shapes[k]})")
    dtypes = {**_MODEL_ARRAYS, **_OPTIONAL_ARRAYS}
    total = sum(int(np.prod(shape)) * np.dtype(dtypes.get(k, np.float32)).itemsize
                for k, shape in shapes.items())
    if total > available_memory():
        raise HSW2VError(f"{path}: the model would take {total / 2**30:.1f} GiB, more than the "
                         f"{available_memory() / 2**30:.1f} GiB of memory available")
    return shapes


def _one_line(e: Exception) -> str:
    return " ".join(str(e).split()) or type(e).__name__


def load_model(path: str) -> Model:
    """Read a model file written by :meth:`Model.save`.

    Never unpickles, and checks every array's declared size and every setting
    before use.

    Parameters
    ----------
    path
        The ``.npz`` model file.

    Returns
    -------
    Model

    Raises
    ------
    HSW2VError
        The file is missing, damaged or not a model; one line says what is wrong.
    """
    path = os.fspath(path)
    meta, arrays = _members(path)
    vectors, node_vectors = arrays["vectors"], arrays["node_vectors"]
    vocab, tree = _vocab_and_tree(path, meta, arrays)
    settings = _settings(path, meta, vectors.shape[1], tree)
    extra = _kind_matrices(path, arrays, settings, len(vocab), vectors.shape[1])
    if node_vectors.shape[1] != vectors.shape[1] + settings.node_bias:
        raise HSW2VError(f"{path}: corrupt model (node_vectors has {node_vectors.shape[1]} columns "
                         f"for vectors of {vectors.shape[1]}, node_bias {settings.node_bias})")
    record = meta.get("settings", {})
    losses = record.get("epoch_loss", [])
    seconds = {k[:-len("_seconds")]: v for k, v in record.items() if k.endswith("_seconds")}
    if not isinstance(losses, list) or not all(
            isinstance(x, (int, float)) and not isinstance(x, bool)
            for x in [*losses, *seconds.values()]):
        raise HSW2VError(f"{path}: corrupt model (epoch_loss and timings must be numbers)")
    return Model(vocab, tree, vectors, node_vectors, settings,
                 [float(x) for x in losses], {k: float(v) for k, v in seconds.items()},
                 extra=extra, history=meta.get("history", []),
                 ngram_vectors=_ngram_vectors(path, arrays, settings, vectors.shape[1]))


def _ngram_vectors(path: str, arrays: dict, settings: TrainSettings, dim: int
                   ) -> np.ndarray | None:
    """A subword model's n-gram rows, checked against its settings."""
    ngrams = arrays.get("ngram_vectors")
    if not settings.subwords:
        if ngrams is not None:
            raise HSW2VError(f"{path}: corrupt model (ngram_vectors without subwords)")
        return None
    if ngrams is None or ngrams.shape != (settings.buckets, dim):
        shape = None if ngrams is None else ngrams.shape
        raise HSW2VError(f"{path}: corrupt model (ngram_vectors has shape {shape} for "
                         f"{settings.buckets} buckets of {dim})")
    if not np.isfinite(ngrams).all():
        raise HSW2VError(f"{path}: corrupt model (ngram_vectors hold NaN or infinity)")
    return ngrams


def _members(path: str) -> tuple[dict, dict[str, np.ndarray]]:
    """A model file's metadata and arrays, read without unpickling and each checked
    against its declared size; the arrays' values checked (:func:`_check_arrays`)."""
    check_regular_file(path, "a model file")
    shapes = _declared_shapes(path)
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in shapes}
    except Exception as e:  # noqa: BLE001 (as above: a damaged member or CRC)
        raise HSW2VError(f"{path}: not an hsw2v model file ({_one_line(e)})") from None
    try:
        meta = json.loads(arrays["meta"].tobytes().decode())
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise HSW2VError(f"{path}: corrupt model (unreadable metadata)") from None
    if not isinstance(meta, dict) or meta.get("format") != MODEL_FORMAT:
        raise HSW2VError(f"{path}: not an hsw2v model file")
    if meta.get("version") not in range(1, MODEL_VERSION + 1) or isinstance(meta["version"], bool):
        raise HSW2VError(
            f"{path}: model format version {meta.get('version')}, "
            f"but this hsw2v reads versions 1 to {MODEL_VERSION}"
        )
    _check_arrays(path, meta, arrays)
    return meta, arrays


def _check_arrays(path: str, meta: dict, arrays: dict[str, np.ndarray]) -> None:
    """Refuse, in one line, arrays whose values a model cannot hold."""
    offsets, counts = arrays["word_offsets"], arrays["counts"]
    problems = [
        (offsets[0] != 0 or offsets[-1] != len(arrays["words"]) or np.any(np.diff(offsets) <= 0),
         "word_offsets do not index the words"),  # or a word is empty
        (counts.min() < 1 or np.any(counts[1:] > counts[:-1]),
         "counts must be positive and in descending order"),
        (not np.isfinite(arrays["vectors"]).all(), "vectors hold NaN or infinity"),
        (not np.isfinite(arrays["node_vectors"]).all(), "node_vectors hold NaN or infinity"),
        (not isinstance(meta.get("tree", "huffman"), str), "the tree kind is not a string"),
        (not isinstance(meta.get("tree_builder", ""), str), "the tree's builder is not a string"),
        (not _counts_by_name(meta.get("tree_details", {}), int(counts.sum())),
         "tree_details must map names to counts no larger than the corpus"),
    ]
    for bad, what in problems:
        if bad:
            raise HSW2VError(f"{path}: corrupt model ({what})")


def _vocab_and_tree(path: str, meta: dict, arrays: dict[str, np.ndarray]) -> tuple[Vocab, Tree]:
    """The model's vocabulary and tree, and its history checked against them."""
    offsets, counts = arrays["word_offsets"], arrays["counts"]
    blob = arrays["words"].tobytes()
    try:
        words = [blob[offsets[i]:offsets[i + 1]].decode("utf-8") for i in range(len(counts))]
        vocab = Vocab(words, counts, markers=meta.get("sentence_markers") is True)
        kind = meta.get("tree", "huffman")  # (files before "tree_builder": the kind's first word)
        tree = Tree(arrays["children"], kind, arrays.get("extra_leaves"),
                    meta.get("tree_builder") or kind.partition("-")[0])
    except UnicodeDecodeError:
        raise HSW2VError(f"{path}: corrupt model (a word is not UTF-8)") from None
    except HSW2VError as e:
        raise HSW2VError(f"{path}: corrupt model ({e})") from None
    tree.details = dict(meta.get("tree_details", {}))
    if not _growths(meta.get("history", []), vocab):
        raise HSW2VError(f"{path}: corrupt model (history must list growths of its vocabulary)")
    return vocab, tree


def _settings(path: str, meta: dict, dim: int, tree: Tree) -> TrainSettings:
    """The model's settings, checked against its vectors' width and its tree."""
    record = meta.get("settings", {})
    try:
        settings = TrainSettings.from_record(record).resolved()
    except HSW2VError as e:
        raise HSW2VError(f"{path}: corrupt model ({e})") from None
    if "dim" in record and settings.dim != dim:  # (--init-model would carry it)
        raise HSW2VError(f"{path}: corrupt model (its settings say dim {settings.dim}, its "
                         f"vectors are {dim} wide)")
    if tree.max_codes > max(settings.max_codes, 1):  # bounds training's scratch
        raise HSW2VError(f"{path}: corrupt model (a word has {tree.max_codes} codes, "
                         f"more than max_codes {settings.max_codes})")
    return settings


def _kind_matrices(path: str, arrays: dict[str, np.ndarray], settings: TrainSettings, n: int,
                   dim: int) -> dict[str, np.ndarray]:
    """The model kind's matrices, each of the shape the kind gives it, all finite."""
    expected = model_kind(settings.arch).matrices(n, dim, settings)
    extra = {k[len(KIND_MATRIX):]: v for k, v in arrays.items() if k.startswith(KIND_MATRIX)}
    for name in sorted(set(expected) | set(extra)):
        if name not in expected:
            raise HSW2VError(f"{path}: corrupt model ({KIND_MATRIX}{name}: {settings.arch} "
                             "has no such matrix)")
        shape = extra[name].shape if name in extra else None
        if shape != tuple(expected[name]):
            raise HSW2VError(f"{path}: corrupt model ({KIND_MATRIX}{name} has shape {shape}, "
                             f"not {tuple(expected[name])})")
        if not np.isfinite(extra[name]).all():
            raise HSW2VError(f"{path}: corrupt model ({KIND_MATRIX}{name} holds NaN or infinity)")
    return {name: extra[name] for name in expected}


def read_vectors(path: str | os.PathLike, make_cache: bool = False) -> Vectors:
    """Word vectors from a word2vec text or binary file, or an hsw2v model file.

    Parameters
    ----------
    path
        A word2vec text or binary file (the format is detected) or a ``.npz`` model.
    make_cache
        Keep a copy for the next read in the user's cache directory
        (:mod:`hsw2v.model.vectors_cache`).

    Returns
    -------
    Vectors
    """
    path = os.fspath(path)
    if path.endswith(".npz"):
        return load_model(path).keyed_vectors()
    return read_word2vec(path, make_cache)


def _growths(history: object, vocab: Vocab) -> bool:
    """Whether ``history`` lists growths: each ``from_words`` a size the vocabulary
    grew from, in order, and ``words`` distinct words of ``vocab``."""
    if not isinstance(history, list):
        return False
    size = 0
    for growth in history:
        if not (isinstance(growth, dict) and set(growth) == {"from_words", "words"}):
            return False
        n, words = growth["from_words"], growth["words"]
        if not (type(n) is int and size <= n and isinstance(words, list)
                and all(isinstance(w, str) and w in vocab.index for w in words)
                and len(set(words)) == len(words) and n + len(words) <= len(vocab)):
            return False
        size = n + len(words)
    return True


def _counts_by_name(details: object, most: int) -> bool:
    """Whether ``details`` is a small dict of str to ints in 0..``most``."""
    return isinstance(details, dict) and len(details) <= 16 and all(
        isinstance(k, str) and type(v) is int and 0 <= v <= most for k, v in details.items())
