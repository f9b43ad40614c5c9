"""The WordNet tree (Morin & Bengio 2005): WordNet's IS-A hierarchy made binary.

The database is WordNet 3.0's plain-text files (``wndb(5WN)``): ``index.POS`` and
``data.POS`` for the four parts of speech, the ``POS.exc`` exception lists and
``cntlist.rev``, as Debian's ``wordnet-base`` installs them in /usr/share/wordnet
(NLTK's ``corpora/wordnet`` holds the same files). Nothing is downloaded.

How the tree is built (the choices, in order):

1. **A word's synset.** A vocabulary word is looked up in lower case. Its
   candidate lemmas are, for each part of speech in the order noun, verb,
   adjective, adverb: the word itself if the index lists it, then its base forms
   by WordNet's morphology (the ``POS.exc`` exceptions when the word is in them,
   otherwise the detachment rules, so "dogs" gives "dog" and "went" gives "go"),
   kept when the index lists them. Each candidate's most frequent sense is the
   first synset its index line lists (WordNet orders senses by tagged
   frequency); the word takes the candidate whose first sense has the most tags
   in ``cntlist.rev`` (ties: the earlier candidate).
2. **Its parent.** A synset's parent is its first hypernym pointer (``@``, or
   ``@i`` for instances, in the order of its data line); a synset with several
   keeps the first. Nouns all lead to *entity*; verbs lead to their own roots,
   which are grouped under a node for verbs. Adjectives and adverbs have no
   hypernyms: their synsets are grouped under a node for their part of speech.
3. **The WordNet part** is the union of the words' chains up to the part of
   speech's node, and the four parts of speech under one node. Words mapped to
   the same synset are children of that synset's node, beside its hyponyms.
4. **Chains of one child collapse**, and a node with more than two children is
   made binary by recursive two-way clustering of its children: with a source
   model (``tree_from``), by the semantic trees' split of the children's mean
   context vectors (:mod:`hsw2v.trees.semantic`, ``split``); otherwise by
   frequency, a Huffman tree over the children's token counts.
5. **The words WordNet lacks** (function words, numbers, most names) get a
   subtree of their own, built by another builder of the registry
   (``wordnet_rest``, Huffman by default); the root joins the WordNet part
   (code 0) and that subtree (code 1).

A damaged database (a missing or empty file, a last line without its end, any
index offset that names no synset, an index and a data file whose sense counts
disagree, a malformed line, a cycle of hypernyms) gets an :class:`HSW2VError`
naming the file and line; the index files are checked whole when read, data lines
are parsed when first looked up. A parsed database is kept for the next tree in
the same process (at most two).
"""
from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import HSW2VError, param
from ..system.files import check_regular_file
from .tree import Tree, from_splits, huffman

PARTS = ("noun", "verb", "adj", "adv")
"""WordNet's parts of speech, by their files' suffix, in the order candidates are tried."""
_POS_CHAR = {"noun": "n", "verb": "v", "adj": "a", "adv": "r"}
_SENSE_KEY_POS = {"1": "noun", "2": "verb", "3": "adj", "4": "adv", "5": "adj"}
_DATA_POS = {"n": "noun", "v": "verb", "a": "adj", "s": "adj", "r": "adv"}
_DETACH = {  # WordNet's detachment rules (morph.c): suffix, replacement
    "noun": (("s", ""), ("ses", "s"), ("xes", "x"), ("zes", "z"), ("ches", "ch"),
             ("shes", "sh"), ("men", "man"), ("ies", "y")),
    "verb": (("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""),
             ("ing", "e"), ("ing", "")),
    "adj": (("er", ""), ("est", ""), ("er", "e"), ("est", "e")),
    "adv": (),
}
HYPERNYMS = ("@", "@i")
NEWLINE = b"\n"
INSTALL_HINT = ("install it with `apt-get install wordnet-base`, or give "
                f"{param('wordnet', 'DIR')} (WordNet 3.0's dict directory)")


def database_dirs(environ: dict | None = None) -> list[Path]:
    """Where a WordNet database is looked for, in order: ``$WNHOME/dict``,
    /usr/share/wordnet, then NLTK's data directories (``$NLTK_DATA``, ~/nltk_data
    and the system ones) with ``corpora/wordnet``."""
    env = os.environ if environ is None else environ
    dirs = [Path(env["WNHOME"]) / "dict"] if env.get("WNHOME") else []
    dirs.append(Path("/usr/share/wordnet"))
    nltk = [Path(p) for p in env.get("NLTK_DATA", "").split(os.pathsep) if p]
    nltk += [Path(env.get("HOME", "~")).expanduser() / "nltk_data"]
    nltk += [Path(p) for p in ("/usr/share/nltk_data", "/usr/local/share/nltk_data",
                               "/usr/lib/nltk_data", "/usr/local/lib/nltk_data")]
    return dirs + [p / "corpora" / "wordnet" for p in nltk]


def find_database(directory: str | None = None, dirs: list[Path] | None = None) -> Path:
    """The WordNet database directory: ``directory`` when given (it must hold
    ``index.noun``), else the first of ``dirs`` (by default
    :func:`database_dirs`) that does."""
    if directory is not None:
        path = Path(directory)
        if not (path / "index.noun").is_file():
            raise HSW2VError(f"{param('wordnet', directory)}: no WordNet database there "
                             f"(index.noun is missing); {INSTALL_HINT}")
        return path
    for path in database_dirs() if dirs is None else dirs:
        if (path / "index.noun").is_file():
            return path
    raise HSW2VError(f"no WordNet database found ($WNHOME/dict, /usr/share/wordnet, "
                     f"nltk_data/corpora/wordnet); {INSTALL_HINT}")


def _read(path: Path) -> bytes:
    if path.exists():  # (a missing file: the hint below)
        check_regular_file(str(path), "a WordNet database file")
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise HSW2VError(f"{path}: missing from the WordNet database; {INSTALL_HINT}") from None
    except OSError as e:
        raise HSW2VError(f"{path}: cannot read ({e.strerror})") from None


SENSES_TOLERANCE = 0.01
"""The senses an index file lists and the words its data file's synsets hold agree
within this share (WordNet 3.0: 146,312 and 146,347 nouns): a file cut short by a
few lines' worth is found."""
_HEX = re.compile(rb"[0-9a-fA-F]{1,8}")


def _checked_offsets(line: bytes, data: bytes, where: str, data_file: Path) -> int:
    """The number of senses of an index line, each offset checked to land on a
    synset line of ``data``; HSW2VError naming ``where`` otherwise."""
    fields = line.split()
    try:
        n_synsets, n_pointers = int(fields[2]), int(fields[3])
        offsets = [int(x) for x in fields[6 + n_pointers:]]
    except (ValueError, IndexError):
        raise HSW2VError(f"{where}: truncated or malformed index line") from None
    if n_synsets < 1 or len(offsets) != n_synsets:
        raise HSW2VError(f"{where}: truncated or malformed index line")
    for offset in offsets:
        if not (0 <= offset < len(data) and (offset == 0 or data[offset - 1] == 10)
                and data[offset:offset + 9] == b"%08d " % offset):
            raise HSW2VError(f"{where}: offset {offset:08d} names no synset in {data_file}")
    return n_synsets


def _lines(blob: bytes) -> Iterator[tuple[int, bytes]]:
    """(line number, line) of a database file, without its licence header (lines
    starting with a space)."""
    for number, line in enumerate(blob.split(b"\n"), 1):
        if line and not line.startswith(b" "):
            yield number, line


@dataclass
class Synset:
    """A synset's part of speech (its data file), offset and first hypernym."""

    part: str
    offset: int
    hypernym: tuple[str, int] | None


class Database:
    """A WordNet database read lazily: index lines by lemma, exceptions, tag
    counts, and data lines by offset (parsed when first asked for)."""

    def __init__(self, directory: Path):
        self.directory = directory
        self.index: dict[str, dict[str, tuple[int, bytes]]] = {}
        self.data: dict[str, bytes] = {}
        self.exceptions: dict[str, dict[str, list[str]]] = {}
        for part in PARTS:
            index_file, data_file = directory / f"index.{part}", directory / f"data.{part}"
            blob, data = _read(index_file), _read(data_file)
            for path, whole in ((index_file, blob), (data_file, data)):
                if not whole.endswith(NEWLINE):
                    raise HSW2VError(f"{path}: truncated (empty, or its last line has no end)")
            lines = {}
            senses = 0
            for number, line in _lines(blob):
                lemma, _, _ = line.partition(b" ")
                lines[lemma.decode("utf-8", "replace")] = (number, line)
                senses += _checked_offsets(line, data, f"{index_file} line {number}", data_file)
            words = sum(int(line.split(b" ", 4)[3], 16) for _, line in _lines(data)
                        if line.count(b" ") >= 4 and _HEX.fullmatch(line.split(b" ", 4)[3]))
            if abs(senses - words) > SENSES_TOLERANCE * max(senses, words):
                raise HSW2VError(f"{index_file} lists {senses} senses but {data_file} holds "
                                 f"{words} words of synsets: one of the two is cut short")
            self.index[part] = lines
            self.data[part] = data
            exc = directory / f"{part}.exc"
            table: dict[str, list[str]] = {}
            if exc.is_file():
                for _, line in _lines(_read(exc)):
                    fields = line.decode("utf-8", "replace").split()
                    if len(fields) >= 2:
                        table.setdefault(fields[0], fields[1:])
            self.exceptions[part] = table
        self.tags: dict[tuple[str, str], int] = {}  # (lemma, part) -> tags of its sense 1
        cntlist = directory / "cntlist.rev"
        if cntlist.is_file():
            for number, line in _lines(_read(cntlist)):
                fields = line.decode("utf-8", "replace").split()
                key = fields[0] if fields else ""
                lemma, _, rest = key.partition("%")
                if len(fields) != 3 or rest[:1] not in _SENSE_KEY_POS or not (
                        fields[1].isdigit() and fields[2].isdigit()):
                    raise HSW2VError(f"{cntlist} line {number}: not a sense key, sense number "
                                     "and tag count")
                if fields[1] == "1":
                    self.tags[(lemma, _SENSE_KEY_POS[rest[0]])] = int(fields[2])
        self._synsets: dict[tuple[str, int], Synset] = {}

    def first_sense(self, part: str, lemma: str) -> int:
        """The offset of ``lemma``'s first (most frequent) sense in ``part``."""
        number, line = self.index[part][lemma]
        where = f"{self.directory / f'index.{part}'} line {number}"
        fields = line.split()
        try:
            n_synsets, n_pointers = int(fields[2]), int(fields[3])
            offsets = fields[6 + n_pointers:]
            ok = fields[1].decode() == _POS_CHAR[part] and n_synsets >= 1 and len(offsets) == n_synsets
            offset = int(offsets[0])
        except (ValueError, IndexError, UnicodeDecodeError):
            ok = False
        if not ok:
            raise HSW2VError(f"{where}: truncated or malformed index line")
        self.synset(part, offset, where)  # (checks the offset)
        return offset

    def where(self, synset: Synset) -> str:
        """The file and line of ``synset``, for messages."""
        blob = self.data[synset.part]
        return f"{self.directory / f'data.{synset.part}'} line {blob.count(NEWLINE, 0, synset.offset) + 1}"

    def synset(self, part: str, offset: int, named_by: str | Synset) -> Synset:
        """The synset at ``offset`` of ``data.part`` (``named_by``, a place or the
        synset whose pointer names it, says who asks)."""
        return self._synsets.get((part, offset)) or self._synset(part, offset, named_by)

    def _synset(self, part: str, offset: int, named_by: str | Synset) -> Synset:
        blob, name = self.data[part], self.directory / f"data.{part}"
        if not (0 <= offset < len(blob) and (offset == 0 or blob[offset - 1:offset] == NEWLINE)
                and blob[offset:offset + 9] == b"%08d " % offset):
            by = self.where(named_by) if isinstance(named_by, Synset) else named_by
            raise HSW2VError(f"{by}: offset {offset:08d} names no synset in {name}")
        end = blob.find(NEWLINE, offset)
        line = blob[offset:end if end >= 0 else len(blob)]
        head = line.split(b" | ", 1)[0].split()
        try:
            n_words = int(head[3], 16)
            at = 4 + 2 * n_words
            n_pointers = int(head[at])
            pointers = head[at + 1:at + 1 + 4 * n_pointers]
            ok = (head[2].decode() in _DATA_POS and _DATA_POS[head[2].decode()] == part
                  and n_words >= 1 and len(pointers) == 4 * n_pointers)
        except (ValueError, IndexError, UnicodeDecodeError):
            ok = False
        if not ok:
            raise HSW2VError(f"{self.where(Synset(part, offset, None))}: truncated or malformed "
                             "synset line")
        hypernym = None
        for k in range(0, len(pointers), 4):
            symbol, target, pos = pointers[k].decode(), pointers[k + 1], pointers[k + 2].decode()
            if symbol in HYPERNYMS:
                if pos not in _DATA_POS or not target.isdigit():
                    raise HSW2VError(f"{self.where(Synset(part, offset, None))}: malformed "
                                     "hypernym pointer")
                hypernym = (_DATA_POS[pos], int(target))
                break
        synset = Synset(part, offset, hypernym)
        self._synsets[(part, offset)] = synset
        return synset

    def candidates(self, word: str) -> list[tuple[str, str]]:
        """(part, lemma) pairs the index lists for ``word``, by the morphology."""
        out: list[tuple[str, str]] = []
        for part in PARTS:
            index = self.index[part]
            forms = [word] if word in index else []
            if word in self.exceptions[part]:
                forms += self.exceptions[part][word]
            else:
                forms += [word[:-len(s)] + r for s, r in _DETACH[part]
                          if word.endswith(s) and len(word) > len(s)]
            for form in forms:
                if form in index and (part, form) not in out:
                    out.append((part, form))
        return out

    def sense_of(self, word: str) -> Synset | None:
        """``word``'s synset: its candidates' most frequent sense (see the module)."""
        found = self.candidates(word.lower())
        if not found:
            return None
        part, lemma = max(found, key=lambda c: (self.tags.get((c[1], c[0]), 0),
                                                -found.index(c)))
        offset = self.first_sense(part, lemma)
        return self._synsets[(part, offset)]


@functools.lru_cache(maxsize=2)
def _database(directory: str, stamp: tuple) -> Database:
    return Database(Path(directory))


def load_database(directory: Path) -> Database:
    """The database in ``directory``, parsed once per process while its files are unchanged."""
    stamp = tuple((p.name, st.st_mtime_ns, st.st_size)
                  for p in sorted(directory.iterdir()) if p.is_file() for st in [p.stat()])
    return _database(str(directory), stamp)


def _hierarchy(covered: list[int], sense: list, database: Database, top: tuple
               ) -> dict[tuple, list]:
    """Each node's children (word ids, or node keys) in the IS-A hierarchy above the
    ``covered`` words' senses, up to ``top`` over each part of speech; a cycle of
    hypernyms fails in one line."""
    below: dict[tuple, list] = {top: []}
    for w in covered:
        node: tuple = ("synset", sense[w].part, sense[w].offset)
        below.setdefault(node, []).append(w)
        seen = {node}
        while True:
            syn = database.synset(node[1], node[2], "(a word's sense)")
            if syn.hypernym is None:
                parent = ("part", syn.part)
            else:
                parent = ("synset", *syn.hypernym)
                database.synset(*syn.hypernym, syn)  # checks the offset
                if parent in seen:
                    raise HSW2VError(f"{database.where(syn)}: its hypernyms form a cycle")
                seen.add(parent)
            fresh = parent not in below
            siblings = below.setdefault(parent, [])
            if node not in siblings:
                siblings.append(node)
            if parent[0] == "part":
                if fresh:
                    below[top].append(parent)
                break
            if not fresh:
                break
            node = parent
    return below


def wordnet_tree(words: list[str], counts: np.ndarray, database: Database,
                 rest=huffman, vectors: np.ndarray | None = None,
                 split: str = "balanced") -> Tree:
    """The WordNet tree over ``words`` (most frequent first, with ``counts``).

    Parameters
    ----------
    words
        The vocabulary, in descending order of counts.
    counts
        Each word's count.
    database
        A parsed WordNet database (:func:`load_database`).
    rest
        ``rest(counts) -> Tree`` for the words WordNet lacks (given their counts,
        in descending order).
    vectors
        One row per word (a source model's context means): when given, wide nodes
        are split by the semantic trees' clustering instead of by frequency.
    split
        The semantic split (``balanced`` or ``adaptive``) used with ``vectors``.

    Returns
    -------
    Tree
        Of kind ``wordnet``; ``tree.details`` holds the words and tokens covered.
    """
    counts = np.asarray(counts, dtype=np.int64)
    n = len(words)
    if n < 2:
        raise HSW2VError("need at least 2 distinct words to build a tree")
    sense = [database.sense_of(w) for w in words]
    covered = [w for w in range(n) if sense[w] is not None]
    top = ("top",)
    below = _hierarchy(covered, sense, database, top)
    children: list[tuple[int, int]] = []
    X = None if vectors is None else np.asarray(vectors, dtype=np.float64)

    def join(items: list[tuple[int, int, np.ndarray | None]]) -> tuple[int, int, np.ndarray | None]:
        """One node over ``items`` (id, weight, vector sum), made binary."""
        if len(items) == 1:  # a chain of one child collapses
            return items[0]
        weight = sum(i[1] for i in items)
        total = None if X is None else sum(i[2] for i in items)
        if X is None or len(items) == 2:
            items = sorted(items, key=lambda i: -i[1])  # (stable)
            sub = huffman(np.array([i[1] for i in items]))
        else:
            from .semantic import gmm_splitter
            means = np.array([i[2] / i[1] for i in items], dtype=np.float32)
            sub = from_splits(np.arange(len(items)), gmm_splitter(means, split), "wordnet")
        return _graft(sub, [i[0] for i in items], children, n), weight, total

    def leaf(w: int):
        return w, int(counts[w]), None if X is None else X[w] * counts[w]

    # post-order over `below` from the top, without recursion
    done: dict[tuple, tuple] = {}
    stack = [(top, False)]
    while stack:
        node, ready = stack.pop()
        kids = below.get(node, [])
        if not ready:
            stack.append((node, True))
            stack.extend((k, False) for k in kids if not isinstance(k, int))
            continue
        done[node] = join([leaf(k) if isinstance(k, int) else done[k] for k in kids]) if kids else None
    parts = []
    if covered:
        parts.append(done[top])
    uncovered = np.array([w for w in range(n) if sense[w] is None], dtype=np.int64)
    if len(uncovered) >= 2:
        sub = rest(counts[uncovered])
        weight = int(counts[uncovered].sum())
        total = None if X is None else (X[uncovered] * counts[uncovered, None]).sum(0)
        parts.append((_graft(sub, uncovered.tolist(), children, n), weight, total))
    elif len(uncovered) == 1:
        parts.append(leaf(int(uncovered[0])))
    if len(parts) == 2:
        children.append((parts[0][0], parts[1][0]))
    tree = Tree(np.array(children, dtype=np.int32).reshape(-1, 2), "wordnet")
    tree.details = {"covered_words": len(covered),
                    "covered_tokens": int(counts[covered].sum()) if covered else 0}
    return tree


def _graft(sub: Tree, items: list[int], children: list[tuple[int, int]], n: int) -> int:
    """Append ``sub``'s inner nodes to ``children`` (a tree over ``n`` words being
    built), its leaf k standing for node ``items[k]``; the id of its root."""
    k, base = sub.n_words, n + len(children)
    ids = np.concatenate([np.asarray(items, dtype=np.int64), base + np.arange(k - 1)])
    children.extend(map(tuple, ids[sub.children].tolist()))
    return base + int(sub.root)
