"""Independent references shared by the tests: plain numpy, nothing from the
package's paths, kernels or context helpers."""
from __future__ import annotations

import numpy as np


def reference_context(m, context) -> np.ndarray:
    """Rows h_c in float64: the mean (or sum) of the known words' vectors for CBOW,
    each known word's vector for skip-gram."""
    rows = np.array([m.vectors[m.words.index(w)] for w in context if w in m.words], np.float64)
    if m.arch == "cbow":
        rows = rows.sum(axis=0, keepdims=True) / (len(rows) if m.settings.cbow_mean else 1)
    return rows


def reference_log_probs(m, context) -> np.ndarray:
    """Σ_c log P(w | h_c) for every word, walking the children table from the root:
    child 0 of inner node a has probability σ(α_a + h·u_a), child 1 σ(−α_a − h·u_a),
    where α_a is the column after the vector when the model has node biases, else 0."""
    rows = reference_context(m, context)
    children = np.asarray(m.tree.children)
    v = len(children) + 1
    root = (set(range(v, 2 * v - 1)) - set(children.ravel().tolist())).pop() - v
    out = np.full(v, np.nan)
    stack = [(root, 0.0)]
    while stack:
        a, logp = stack.pop()
        u = m.node_vectors[a].astype(np.float64)
        x = rows @ u[:rows.shape[1]] + (u[rows.shape[1]] if len(u) > rows.shape[1] else 0.0)
        for child, sign in zip(children[a], (1.0, -1.0)):
            value = logp - np.logaddexp(0.0, -sign * x).sum()
            if child < v:
                out[child] = value
            else:
                stack.append((child - v, value))
    assert not np.isnan(out).any()
    return out
