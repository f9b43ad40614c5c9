"""The WordNet tree (``--tree wordnet``): a small database in WordNet's exact file
format, written here, checks each construction rule against a tree written out by
hand; the real database (Debian's wordnet-base) checks a few known relations."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import hsw2v
from hsw2v.errors import HSW2VError
from hsw2v.trees.tree import balanced
from hsw2v.trees.wordnet import Database, database_dirs, find_database, wordnet_tree

from tests.helpers import one_line_error, run_hsw2v

REAL = Path("/usr/share/wordnet")
LICENCE = "  1 This software and database is being provided to you, the LICENSEE, by\n" \
          "  2 Princeton University under the following license.\n"

# Each synset: (key, part, ss_type, lemmas, [(pointer symbol, target key)], gloss).
SYNSETS = [
    ("entity", "noun", "n", ["entity"], [], "that which is perceived to exist"),
    ("animal", "noun", "n", ["animal", "beast"], [("@", "entity")], "a living organism"),
    ("dog", "noun", "n", ["dog", "domestic_dog"], [("@", "animal")], "a member of the genus Canis"),
    ("cat", "noun", "n", ["cat"], [("@", "animal")], "feline mammal"),
    ("mouse", "noun", "n", ["mouse"], [("@", "animal")], "a small rodent"),
    ("pointer", "noun", "n", ["mouse"], [("@", "entity")], "a hand-operated device"),
    # two hypernyms: the first (dog) is kept
    ("hound", "noun", "n", ["hound"], [("@", "dog"), ("@", "cat")], "a dog used in hunting"),
    ("idea", "noun", "n", ["idea", "thought"], [("@", "entity")], "a content of cognition"),
    ("walk_n", "noun", "n", ["walk"], [("@", "entity")], "the act of walking"),
    ("run", "verb", "v", ["run"], [], "move fast by using one's feet"),
    ("sprint", "verb", "v", ["sprint"], [("@", "run")], "run very fast"),
    ("walk_v", "verb", "v", ["walk"], [], "use one's feet to advance"),
    ("red", "adj", "a", ["red"], [("&", "blue")], "having the colour of blood"),
    ("blue", "adj", "s", ["blue"], [], "having the colour of the sky"),
    ("quickly", "adv", "r", ["quickly"], [], "with speed"),
]
EXCEPTIONS = {"noun": ["mice mouse"], "verb": ["ran run"], "adj": ["bluer blue"], "adv": []}
TAGS = ["walk%2:38:00:: 1 30", "walk%1:04:00:: 1 5", "dog%1:05:00:: 1 10", "run%2:38:00:: 1 20"]


def write_database(root: Path) -> dict[str, int]:
    """WordNet's files for :data:`SYNSETS` in ``root``: data lines at their byte
    offsets (8 digits, so line lengths do not depend on them), the index listing
    each lemma's senses in the order of SYNSETS; returns each synset's offset."""
    root.mkdir(parents=True, exist_ok=True)
    offsets: dict[str, int] = {}

    def line(key, part, ss_type, lemmas, pointers, gloss):
        words = " ".join(f"{w} 0" for w in lemmas)
        ptrs = " ".join(f"{sym} {offsets.get(t, 0):08d} {dict(SYNSET_PART)[t][0]} 0000"
                        for sym, t in pointers)
        return (f"{offsets.get(key, 0):08d} 03 {ss_type} {len(lemmas):02x} {words} "
                f"{len(pointers):03d} {ptrs}{' ' if ptrs else ''}| {gloss}  \n")

    for _ in range(2):  # the first pass finds the offsets, the second writes them
        for part in ("noun", "verb", "adj", "adv"):
            text = LICENCE
            for s in SYNSETS:
                if s[1] == part:
                    offsets[s[0]] = len(text.encode())
                    text += line(*s)
            (root / f"data.{part}").write_text(text)
    for part, char in (("noun", "n"), ("verb", "v"), ("adj", "a"), ("adv", "r")):
        senses: dict[str, list[str]] = {}
        for key, p, _, lemmas, _, _ in SYNSETS:
            if p == part:
                for lemma in lemmas:
                    senses.setdefault(lemma, []).append(f"{offsets[key]:08d}")
        lines = [f"{lemma} {char} {len(offs)} 1 @ {len(offs)} 0 {' '.join(offs)}  \n"
                 for lemma, offs in sorted(senses.items())]
        (root / f"index.{part}").write_text(LICENCE + "".join(lines))
        (root / f"{part}.exc").write_text("".join(e + "\n" for e in EXCEPTIONS[part]))
    (root / "cntlist.rev").write_text("".join(t + "\n" for t in TAGS))
    return offsets


SYNSET_PART = [(s[0], s[1]) for s in SYNSETS]

# Most frequent first; "the", "of" and "zzz" are not in the database.
VOCAB = [("the", 100), ("of", 80), ("dogs", 50), ("cat", 40), ("mice", 30), ("ran", 25),
         ("walk", 20), ("idea", 15), ("red", 12), ("bluer", 10), ("sprint", 8), ("hound", 6),
         ("quickly", 5), ("zzz", 4)]
WORDS = [w for w, _ in VOCAB]
COUNTS = np.array([c for _, c in VOCAB], dtype=np.int64)


def shape(tree, words) -> frozenset | str:
    """The tree as nested frozensets of words (children unordered)."""
    def node(i):
        if i < tree.n_words:
            return words[i]
        return frozenset(node(c) for c in tree.children[i - tree.n_words].tolist())
    return node(tree.n_words + tree.root)


def s(*items):
    return frozenset(items)


def test_the_tree_follows_each_construction_rule(tmp_path):
    """Written out by hand from the rules:
    - dogs → dog (detachment), mice → mouse (exception list; the animal, its first
      sense), ran → run and bluer → blue (exceptions), walk → the verb (more tags);
    - hound has hypernyms dog and cat, and stays under dog;
    - the noun side is entity's tree (the part-of-speech node above it, a chain
      of one child, collapses); sprint alone under sprint collapses into run;
    - animal's three children (dog 56, cat 40, mouse 30) are joined by Huffman:
      {dog, {cat, mice}}; the four parts (noun 141, verb 53, adj 22, adv 5) too;
    - the, of and zzz get a Huffman tree of their own beside the WordNet part."""
    db = Database(_db(tmp_path))
    tree = wordnet_tree(WORDS, COUNTS, db)
    animal = s(s("dogs", "hound"), s("cat", "mice"))
    noun = s(animal, "idea")
    verb = s(s("ran", "sprint"), "walk")
    wordnet_part = s(noun, s(verb, s(s("red", "bluer"), "quickly")))
    rest = s("the", s("of", "zzz"))
    assert shape(tree, WORDS) == s(wordnet_part, rest)
    assert tree.kind == "wordnet"
    assert tree.details == {"covered_words": 11, "covered_tokens": int(COUNTS.sum()) - 184}
    summary = tree.summary(COUNTS)
    assert summary["covered_word_share"] == pytest.approx(11 / 14)
    # every word is a leaf once: a full binary tree over the 14 words
    assert sorted(tree.leaf_words.tolist()) == list(range(14)) and tree.children.shape == (13, 2)


def test_wide_nodes_split_by_vectors_when_a_source_model_is_given(tmp_path):
    """With vectors and the adaptive split, animal's children are grouped by
    meaning, not by count: dog and mice close together, cat far, gives
    {{dog, mice}, cat} where Huffman gave {dog, {cat, mice}}."""
    db = Database(_db(tmp_path))
    rng = np.random.default_rng(0)
    X = rng.normal(size=(len(WORDS), 8)).astype(np.float32)
    near = np.ones(8, dtype=np.float32) * 5
    for w in ("dogs", "hound", "mice"):
        X[WORDS.index(w)] = near + 0.01 * rng.normal(size=8)
    X[WORDS.index("cat")] = -near
    tree = wordnet_tree(WORDS, COUNTS, db, vectors=X, split="adaptive")
    animal = s(s(s("dogs", "hound"), "mice"), "cat")
    assert animal in _subtrees(shape(tree, WORDS))


def test_the_rest_is_built_by_the_named_builder(tmp_path):
    """The words WordNet lacks, in vocabulary order, go to the builder given."""
    db = Database(_db(tmp_path))
    words = WORDS + ["q1", "q2", "q3", "q4"]
    counts = np.append(COUNTS, [3, 3, 2, 1])
    rest = [w for w in words if db.sense_of(w) is None]
    assert rest == ["the", "of", "zzz", "q1", "q2", "q3", "q4"]
    tree = wordnet_tree(words, counts, db, rest=lambda c: balanced(len(c)))
    # balanced halves of the rest, in order: {{the, of}, {zzz, q1}}, {{q2, q3}, q4}}
    expected = s(s(s("the", "of"), s("zzz", "q1")), s(s("q2", "q3"), "q4"))
    assert expected in _subtrees(shape(tree, words))


def _subtrees(node):
    if isinstance(node, str):
        return [node]
    return [node] + [x for child in node for x in _subtrees(child)]


def _db(tmp_path) -> Path:
    root = tmp_path / "wn"
    write_database(root)
    return root


def test_a_database_is_looked_for_where_wordnet_and_nltk_keep_it(tmp_path):
    dirs = database_dirs({"WNHOME": "/opt/wn", "NLTK_DATA": "/data/a", "HOME": "/home/u"})
    assert dirs[:3] == [Path("/opt/wn/dict"), Path("/usr/share/wordnet"),
                        Path("/data/a/corpora/wordnet")]
    assert Path("/home/u/nltk_data/corpora/wordnet") in dirs
    root = _db(tmp_path)
    assert find_database(str(root)) == root
    with pytest.raises(HSW2VError, match="apt-get install wordnet-base"):
        find_database(dirs=[tmp_path / "none", tmp_path])
    assert find_database(dirs=[tmp_path / "none", root]) == root


def _train(cwd, db, *more, out="v.txt"):
    corpus = cwd / "c.txt"
    if not corpus.exists():
        rng = np.random.default_rng(0)
        lines = [" ".join(rng.choice(WORDS, 12, p=COUNTS / COUNTS.sum())) for _ in range(300)]
        corpus.write_text("\n".join(lines) + "\n")
    return run_hsw2v(cwd, "train", "c.txt", "--tree", "wordnet", "--wordnet", str(db),
                     "--min-count", "1", "--dim", "8", "--epochs", "1", "--threads", "1",
                     "--quiet", "-o", out, *more)


def test_cli_trains_reports_and_needs_no_database_afterwards(tmp_path):
    db = _db(tmp_path)
    r = _train(tmp_path, db, "--save-model", "m.npz")
    assert r.returncode == 0, r.stderr
    info = json.loads(run_hsw2v(tmp_path, "tree", "m.npz", "--json").stdout)
    assert info["kind"] == "wordnet" and info["covered_words"] == 11
    assert info["covered_word_share"] == pytest.approx(11 / 14)
    text = run_hsw2v(tmp_path, "tree", "m.npz").stdout
    assert "covered by wordnet: 11 words (78.6%)" in text
    model = hsw2v.load_model(str(tmp_path / "m.npz"))
    assert shape(model.tree, model.words) == shape(wordnet_tree(model.words, model.vocab.counts,
                                                                Database(db)), model.words)
    for f in db.iterdir():
        f.unlink()
    db.rmdir()
    r = run_hsw2v(tmp_path, "predict", "--model", "m.npz", "the", "cat", "-n", "3", "--json")
    assert r.returncode == 0 and len(json.loads(r.stdout)) == 3, r.stderr
    assert run_hsw2v(tmp_path, "score", "c.txt", "--model", "m.npz").returncode == 0


@pytest.mark.parametrize("damage", ["bad offset", "truncated line", "missing index", "cycle"])
def test_a_damaged_database_gets_one_line_naming_file_and_line(tmp_path, damage):
    db = tmp_path / "wn"
    offsets = write_database(db)
    if damage == "bad offset":
        text = (db / "index.noun").read_text()
        line = next(ln for ln in text.splitlines() if ln.startswith("cat "))
        (db / "index.noun").write_text(text.replace(line, line.replace(
            f"{offsets['cat']:08d}", f"{offsets['cat'] + 3:08d}")))
        number = text.splitlines().index(line) + 1
        expected = f"index.noun line {number}: offset {offsets['cat'] + 3:08d} names no synset"
    elif damage == "truncated line":  # (padded with spaces, so the offsets hold)
        blob = (db / "data.noun").read_bytes()
        at = offsets["animal"]
        end = blob.index(b"\n", at)
        (db / "data.noun").write_bytes(blob[:at + 30] + b" " * (end - at - 30) + blob[end:])
        number = blob[:at].count(b"\n") + 1
        expected = f"data.noun line {number}: truncated or malformed"
    elif damage == "missing index":
        (db / "index.verb").unlink()
        expected = "index.verb: missing from the WordNet database"
    else:  # entity's line points up at animal: animal → entity → animal
        blob = (db / "data.noun").read_bytes()
        at = offsets["entity"]
        old = blob[at:blob.index(b"\n", at)]
        new = old.replace(b" 000 | that which is perceived to exist",
                          b" 001 @ %08d n 0000 | that" % offsets["animal"])
        new = new + b" " * (len(old) - len(new))  # (keeps the offsets)
        assert new != old and len(new) == len(old)
        (db / "data.noun").write_bytes(blob.replace(old, new))
        expected = "hypernyms form a cycle"
    (tmp_path / "v.txt").write_text("keep me\n")
    r = _train(tmp_path, db)
    line = one_line_error(r)
    assert expected in line, line
    assert (tmp_path / "v.txt").read_text() == "keep me\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.txt", "v.txt", "wn"]


def test_a_missing_database_is_refused_before_the_corpus_is_read(tmp_path):
    r = run_hsw2v(tmp_path, "train", "-", "--tree", "wordnet", "--wordnet", str(tmp_path / "no"),
                  input="never read\n" * 10)
    line = one_line_error(r)
    assert "--wordnet" in line and "apt-get install wordnet-base" in line
    with pytest.raises(HSW2VError, match=r"wordnet='.*no': no WordNet database"):
        hsw2v.train(str(tmp_path / "absent.txt"), tree="wordnet", wordnet=str(tmp_path / "no"))


def _ancestors(tree, word):
    nodes, _ = tree.path(word)
    return nodes.tolist()


def _shared_depth(tree, a, b):
    depth = 0
    for x, y in zip(_ancestors(tree, a), _ancestors(tree, b)):
        if x != y:
            break
        depth += 1
    return depth


@pytest.fixture(scope="module")
def real():
    assert (REAL / "index.noun").is_file(), (
        "the real-database tests need WordNet 3.0: apt-get install wordnet-base")
    return Database(REAL)


def test_the_real_database_relates_known_words(real):
    words = ["the", "of", "dog", "cat", "idea", "dogs", "went", "horse", "thought", "zzyzx"]
    counts = np.arange(len(words), 0, -1) * 10
    tree = wordnet_tree(words, counts, real)
    w = words.index
    assert _shared_depth(tree, w("dog"), w("cat")) > _shared_depth(tree, w("dog"), w("idea"))
    assert _shared_depth(tree, w("dog"), w("horse")) > _shared_depth(tree, w("dog"), w("thought"))
    assert real.sense_of("dogs") == real.sense_of("dog")  # (morphology)
    assert real.candidates("went") == [("verb", "go")]
    assert [x for x in words if real.sense_of(x) is None] == ["the", "of", "zzyzx"]
    assert tree.details["covered_words"] == 7


@pytest.fixture
def damaged(tmp_path):
    """A copy of the real database to damage, and an English corpus that WordNet
    covers well (the bundled slice's first 20,000 words)."""
    import gzip
    import shutil

    if not (REAL / "index.noun").is_file():
        pytest.skip("no WordNet database (apt-get install wordnet-base)")
    copy = tmp_path / "wn"
    shutil.copytree(REAL, copy)
    with gzip.open(hsw2v.datasets.enwiki_1m(), "rt") as f:
        words = f.read(200_000).split()[:20_000]
    (tmp_path / "en.txt").write_text("\n".join(" ".join(words[i:i + 100])
                                               for i in range(0, len(words), 100)) + "\n")
    return copy


def _wordnet_run(cwd, db, corpus="en.txt"):
    return run_hsw2v(cwd, "train", corpus, "--tree", "wordnet", "--wordnet", str(db),
                     "--dim", "8", "--epochs", "1", "--threads", "1", "--quiet", "-o", "v.txt")


def test_a_damaged_database_is_one_line_never_a_smaller_tree(tmp_path, damaged):
    """Cut mid-line, cut at a line, emptied: each is an error naming the file, where
    the tree used to lose coverage in silence (hostile round four, item 2)."""
    assert _wordnet_run(tmp_path, damaged).returncode == 0  # the copy, whole
    index = damaged / "index.noun"
    whole = index.read_bytes()
    index.write_bytes(whole[:len(whole) // 2])
    assert one_line_error(_wordnet_run(tmp_path, damaged)) == \
        f"hsw2v: error: {index}: truncated (empty, or its last line has no end)"
    cut = whole[:whole.index(b"\n", len(whole) // 2) + 1]
    index.write_bytes(cut)
    line = one_line_error(_wordnet_run(tmp_path, damaged))
    assert line.startswith(f"hsw2v: error: {index} lists ") and line.endswith(
        f"senses but {damaged / 'data.noun'} holds 146347 words of synsets: one of the two is cut short")
    for part in ("noun", "verb", "adj", "adv"):
        (damaged / f"index.{part}").write_bytes(b"")
    assert "truncated" in one_line_error(_wordnet_run(tmp_path, damaged))


def test_a_corpus_wordnet_barely_covers_is_refused(tmp_path, damaged):
    """Another language: "WordNet covers 0 of N words" rather than a tree that is
    Huffman's under a wordnet label."""
    words = [f"слово{i}" for i in range(50)]
    rng = np.random.default_rng(1)
    (tmp_path / "ru.txt").write_text("\n".join(" ".join(rng.choice(words, 20)) for _ in range(200)))
    line = one_line_error(_wordnet_run(tmp_path, damaged, "ru.txt"))
    assert line.startswith("hsw2v: error: WordNet covers 0 of 50 words (0.0% of the tokens), "
                           "below the floor of 5%")


def test_a_fifo_in_the_database_is_one_line_not_a_hang(tmp_path, damaged):
    """A WordNet file that is a FIFO would block in open() for ever (round four, 13)."""
    import os

    (damaged / "data.verb").unlink()
    os.mkfifo(damaged / "data.verb")
    assert one_line_error(_wordnet_run(tmp_path, damaged)) == \
        f"hsw2v: error: {damaged / 'data.verb'}: a FIFO, not a WordNet database file"


def test_a_grown_wordnet_tree_reports_its_coverage_of_the_grown_counts(tmp_path, real):
    """Hostile round five, item 6, in real processes: after --grow, ``hsw2v tree``
    gives the share of the grown counts that the words WordNet placed hold (their
    counts in both texts), computed here from the texts and the database."""
    import gzip
    import json
    from collections import Counter

    from tests.helpers import REPO, run_hsw2v

    with gzip.open(REPO / "data" / "enwiki-1m.txt.gz", "rt") as f:
        words = f.read(1_000_000).split()
    (tmp_path / "a.txt").write_text(" ".join(words[:60_000]) + "\n")
    (tmp_path / "b.txt").write_text(" ".join(words[60_000:140_000]) + "\n")
    fast = ("--dim", "8", "--epochs", "1", "--threads", "1", "--min-count", "3", "--quiet")
    assert run_hsw2v(tmp_path, "train", "a.txt", "--tree", "wordnet", *fast, "-o", "a.vec",
                     "--save-model", "a.npz").returncode == 0
    grown = run_hsw2v(tmp_path, "train", "b.txt", "--init-model", "a.npz", "--grow", *fast,
                      "-o", "g.vec", "--save-model", "g.npz")
    assert grown.returncode == 0, grown.stderr
    shown = json.loads(run_hsw2v(tmp_path, "tree", "g.npz", "--json").stdout)
    a, b = Counter(words[:60_000]), Counter(words[60_000:140_000])
    built = [w for w, c in a.items() if c >= 3]
    covered = [w for w in built if real.sense_of(w) is not None]
    model = hsw2v.load_model(str(tmp_path / "g.npz"))
    total = int(model.vocab.counts.sum())
    want = sum(a[w] + b[w] for w in covered) / total
    assert shown["covered_words"] == len(covered)
    assert abs(shown["covered_token_share"] - want) < 1e-9
    before = json.loads(run_hsw2v(tmp_path, "tree", "a.npz", "--json").stdout)
    assert shown["covered_token_share"] != before["covered_token_share"]
