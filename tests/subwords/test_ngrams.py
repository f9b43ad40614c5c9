"""A word's n-grams and their rows against fastText's own (the fasttext package)."""
import fasttext
import numpy as np
import pytest

from hsw2v.subwords.ngrams import fasttext_hash, subword_table, unseen_rows, word_ngrams

WORDS = ["the", "a", "of", "naïve", "日本語", "über", "x", "</s>", "😀ok", "abcdefghij", "ab"]
UNSEEN = ["unseen", "ñandú", "q", "日本", "aaaa", "🙂🙂", "</s>x"]


@pytest.fixture(scope="module", params=[(3, 6, 2_000_000), (1, 2, 17), (2, 4, 10_000_019),
                                        (5, 3, 100)])
def fasttext_model(request, tmp_path_factory):
    """A fastText model over WORDS with the given minn, maxn and bucket."""
    minn, maxn, bucket = request.param
    corpus = tmp_path_factory.mktemp("ft") / "corpus.txt"
    corpus.write_text((" ".join(WORDS) + "\n") * 3, encoding="utf-8")
    model = fasttext.train_unsupervised(str(corpus), model="cbow", minCount=1, minn=minn,
                                        maxn=maxn, bucket=bucket, dim=2, epoch=1, thread=1,
                                        verbose=0)
    return model, minn, maxn, bucket


def test_each_words_rows_are_fasttexts(fasttext_model):
    """Every vocabulary word's rows (its own, then its n-grams', ``</s>`` none) and
    every unseen word's, for several n-gram lengths and bucket counts, are the ids
    fastText gives: multi-byte characters count as one, bytes over 0x7F hash as
    signed chars."""
    model, minn, maxn, bucket = fasttext_model
    words = model.words  # (fastText's order)
    table = subword_table(words, minn, maxn, bucket)
    for i, word in enumerate(words):
        _, ids = model.get_subwords(word)
        assert table.rows[table.offsets[i]:table.offsets[i + 1]].tolist() == list(ids), word
    for word in UNSEEN:
        _, ids = model.get_subwords(word)
        assert unseen_rows(word, len(words), minn, maxn, bucket).tolist() == list(ids), word


def test_the_ngrams_are_fasttexts_strings(fasttext_model):
    model, minn, maxn, _ = fasttext_model
    for word in UNSEEN:
        grams, _ = model.get_subwords(word)
        assert [g.decode("utf-8") for g in word_ngrams(word, minn, maxn)] == list(grams)


def test_the_hash_is_32_bit_fnv1a_over_signed_chars():
    """Against the definition: FNV-1a's offset and prime in 32 bits, each byte
    sign-extended as a C ``int8_t`` before the xor."""
    def reference(data: bytes) -> int:
        h = np.uint32(2166136261)
        for b in data:
            signed = np.int8(np.uint8(b).view(np.int8))
            h = np.uint32((int(h) ^ (int(signed) & 0xFFFFFFFF)) * 16777619 & 0xFFFFFFFF)
        return int(h)
    for data in [b"", b"a", b"<the>", "é".encode(), bytes(range(256))]:
        assert fasttext_hash(data) == reference(data)
    assert fasttext_hash(b"\xe9") != fasttext_hash(b"\xe9".decode("latin-1").encode("ascii", "replace"))


def test_the_table_is_compact_and_int32():
    table = subword_table(["ab", "abc"], 3, 6, 10)
    assert table.offsets.dtype == table.rows.dtype == np.int32
    assert table.offsets.tolist() == [0, 4, 11]  # own + <ab <ab> ab> ; own + six of abc
    assert len(table.rows) == table.offsets[-1]
    assert table.rows[0] == 0 and table.rows[4] == 1
    others = np.r_[table.rows[1:4], table.rows[5:]]
    assert ((2 <= others) & (others < 12)).all()
