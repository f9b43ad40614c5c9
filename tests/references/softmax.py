"""Independent references shared by the tests: plain numpy, nothing from the
package's paths, kernels or context helpers."""
from __future__ import annotations

import numpy as np


def lbl_prediction(m, context) -> np.ndarray:
    """LBL's r̂ in float64 from the model file's matrices: the last N known words,
    the last nearest (position 1), weighted by position (c_p ⊙ r, or C_p r with
    full weights); positions with no word take the start row."""
    n, dim = m.settings.window, m.dim
    positions = m.extra["positions"].astype(np.float64)
    start = m.extra["start"][0].astype(np.float64)
    known = [m.vectors[m.words.index(w)].astype(np.float64) for w in context if w in m.words]
    h = np.zeros(dim)
    for p in range(n):
        r = known[-1 - p] if p < len(known) else start
        if positions.shape[0] == n * dim:
            h += positions[p * dim:(p + 1) * dim] @ r
        else:
            h += positions[p] * r
    return h


def reference_context(m, context) -> np.ndarray:
    """Rows h_c in float64: the mean (or sum) of the known words' vectors for CBOW,
    each known word's vector for skip-gram, LBL's r̂ (see :func:`lbl_prediction`)."""
    if m.arch == "lbl":
        return lbl_prediction(m, context)[None, :]
    rows = np.array([m.vectors[m.words.index(w)] for w in context if w in m.words], np.float64)
    if m.arch == "cbow":
        rows = rows.sum(axis=0, keepdims=True) / (len(rows) if m.settings.cbow_mean else 1)
    return rows


def reference_log_probs(m, context) -> np.ndarray:
    """Σ_c log P(w | h_c) for every word, walking the children table from the root:
    child 0 of inner node a has probability σ(α_a + h·u_a), child 1 σ(−α_a − h·u_a),
    where α_a is the column after the vector when the model has node biases, else 0.
    Leaves past the V words are further codes of the words the model file's
    ``extra_leaves`` names; P(w | h_c) sums over a word's codes."""
    rows = reference_context(m, context)
    children = np.asarray(m.tree.children)
    n_leaves = len(children) + 1
    word_of = np.concatenate([np.arange(len(m.words)), np.asarray(m.tree.extra_leaves, int)])
    assert len(word_of) == n_leaves
    inner_ids = set(range(n_leaves, 2 * n_leaves - 1))
    root = (inner_ids - set(children.ravel().tolist())).pop() - n_leaves
    per_leaf = np.full((len(rows), n_leaves), np.nan)
    stack = [(root, np.zeros(len(rows)))]
    while stack:
        a, logp = stack.pop()
        u = m.node_vectors[a].astype(np.float64)
        x = rows @ u[:rows.shape[1]] + (u[rows.shape[1]] if len(u) > rows.shape[1] else 0.0)
        for child, sign in zip(children[a], (1.0, -1.0)):
            value = logp - np.logaddexp(0.0, -sign * x)
            if child < n_leaves:
                per_leaf[:, child] = value
            else:
                stack.append((child - n_leaves, value))
    assert not np.isnan(per_leaf).any()
    per_word = np.full((len(rows), len(m.words)), -np.inf)
    for leaf, w in enumerate(word_of):
        per_word[:, w] = np.logaddexp(per_word[:, w], per_leaf[:, leaf])
    return per_word.sum(axis=0)


def reference_top(model, context, n: int) -> list[str]:
    """The n most probable words after ``context``, by :func:`reference_log_probs`."""
    ref = reference_log_probs(model, context)
    return [model.words[i] for i in np.argsort(-ref, kind="stable")[:n]]
