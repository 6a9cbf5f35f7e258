"""Text for the pages: Markdown tables, and computed numbers said as prose.

Nothing here computes a result of the book: every function formats what a concept module computed
for ``{glue:md}`` and ``{glue:text}``. The summaries of benchmark records are in :mod:`.summaries`,
the explorables' states in :mod:`.explorables`.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from .graph import node_labels
from .scores import scaled_scores
from .softmax import softmax
from .validation import as_matrix, check_same
from .worked_example import (
    PEOPLE,
    PUBLISHED,
    PUBLISHED_DECIMALS,
    asymmetry_pairs,
    displacement,
    distance_to_mean,
    embeddings,
    exact_scores,
    exact_weights,
    index,
    published_values,
    row_normalisers,
)

__all__ = ["pattern_table", "markdown_table", "claims_table", "movement_table", "asymmetry_table", "outputs_table",
           "trace_table", "pair_words"]


# --------------------------------------------------------------------------------------------------
# Tables (Markdown, glued with {glue:md})
# --------------------------------------------------------------------------------------------------


def markdown_table(M, row_labels, col_labels, fmt: str = "{:.3f}", corner: str = "") -> str:
    """A Markdown table of the 2-d array ``M`` with named rows and columns."""
    M = np.asarray(M)
    if M.ndim != 2:
        raise ValueError(f"M must be a 2-d array; got shape {M.shape}")
    row_labels, col_labels = list(row_labels), list(col_labels)
    if len(row_labels) != M.shape[0] or len(col_labels) != M.shape[1]:
        raise ValueError(f"labels must match M's shape {M.shape}; got {len(row_labels)} row and "
                         f"{len(col_labels)} column labels")
    lines = ["| " + " | ".join([corner] + col_labels) + " |",
             "|" + "---|" * (len(col_labels) + 1)]
    for name, row in zip(row_labels, M):
        cells = [c if isinstance(c, str) else fmt.format(c) for c in row]
        lines.append("| " + " | ".join([f"**{name}**"] + cells) + " |")
    return "\n".join(lines)


def claims_table() -> str:
    """The article's published numbers beside their exact forms and the package's decimals (Markdown)."""
    S = scaled_scores(embeddings(), embeddings())  # (4, 4)
    W = softmax(S)  # (4, 4)
    exact = {"S": exact_scores(), "W": exact_weights()}
    computed = published_values(S, W)  # (5,)
    rows = ["| entry | exact | computed | the article |", "|---|---|---|---|"]
    for (m, i, j, v), x in zip(PUBLISHED, computed):
        what = "score" if m == "S" else "weight"
        tex = sp.latex(exact[m][index(i), index(j)])
        rows.append(f"| {what} {i} → {j} | ${tex}$ | {x:.6f} | {v:.{PUBLISHED_DECIMALS}f} |")
    return "\n".join(rows)


def movement_table(X, Y, labels=PEOPLE) -> str:
    """Markdown: each row's x_i, y_i, its distance to the mean x̄ before and after, and ‖y_i − x_i‖.

    The last three headers are words (*before*, *after*, *moved*), so the table fits a phone's column;
    the page defines them under it."""
    X = as_matrix(X, "X", shape_doc="(n, 2)")  # (n, 2)
    Y = as_matrix(Y, "Y", shape_doc="(n, 2)")  # (n, 2)
    labels = list(labels)
    if len(labels) != X.shape[0]:
        raise ValueError(f"labels must name the {X.shape[0]} rows; got {len(labels)} labels")
    before = distance_to_mean(X)  # (n,)
    after = np.linalg.norm(Y - X.mean(axis=0), axis=1)  # (n,)
    moved = displacement(X, Y)  # (n,)
    rows = ["| | $x_i$ | $y_i$ | before | after | moved |", "|---|---|---|---|---|---|"]
    for k, name in enumerate(labels):
        x = ", ".join(f"{v:g}" for v in X[k])
        y = ", ".join(f"{v:.3f}" for v in Y[k])
        rows.append(f"| **{name}** | ({x}) | ({y}) | {before[k]:.3f} | {after[k]:.3f} | {moved[k]:.3f} |")
    return "\n".join(rows)


def asymmetry_table(W, S, labels=PEOPLE) -> str:
    """Markdown: every pair i < j with W_ij, W_ji, their gap and Z_j/Z_i, largest gap first.

    Z_j/Z_i is also W_ij/W_ji (eq-worked-asymmetry): one column shows both, so the table fits a
    phone's column; the page says so under it, and defines *gap*, W_ij − W_ji."""
    W = as_matrix(W, "W", shape_doc="(n, n)")  # (n, n)
    Z = row_normalisers(S)  # (n,)
    labels = list(labels)
    check_same(len(labels), W.shape[0], "labels must name every row of W")
    check_same(len(Z), W.shape[0], "S and W must have the same number of rows")
    rows = ["| $i$ | $j$ | $W_{ij}$ | $W_{ji}$ | gap | $Z_j/Z_i$ |", "|---|---|---|---|---|---|"]
    for i, j, wij, wji in asymmetry_pairs(W):
        rows.append(f"| {labels[i]} | {labels[j]} | {wij:.3f} | {wji:.3f} | {wij - wji:+.3f} | {Z[j] / Z[i]:.3f} |")
    return "\n".join(rows)


def outputs_table(X, models: dict, labels, fmt: str = "{:.3f}", input_name: str = "$x$") -> str:
    """A Markdown table: one row per node, its input (``input_name``) and its output y under each model.

    The models' outputs should live in the space of ``X``: GAT's live in that of X̃ = XΘ, so its
    table takes X̃ as input, with ``input_name="$\\tilde x$"``.
    """
    X = as_matrix(X, "X", shape_doc="(n, d)")  # (n, d)
    labels = node_labels(labels, X.shape[0])
    if not isinstance(input_name, str) or not input_name:
        raise ValueError(f"input_name must be a non-empty string; got {input_name!r}")

    def vec(v) -> str:
        return "(" + ", ".join(fmt.format(float(x)).replace("-", "−") for x in v) + ")"

    head = ["node", f"input {input_name}"] + [f"{name} $y$" for name in models]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for i, name in enumerate(labels):
        cells = [name, vec(X[i])] + [vec(Y[i]) for Y, _ in models.values()]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def trace_table(trace: list[dict], labels) -> str:
    """A Markdown table of :func:`online_trace`, one row per block, keys named by ``labels``."""
    labels = [str(x) for x in labels]
    rows = ["| step | keys read | $m$ | $\\ell$ | $o$ |", "| --- | --- | --- | --- | --- |"]
    for step, entry in enumerate(trace, 1):
        names = ", ".join(labels[j] for j in entry["keys"])
        o = ", ".join(f"{x:.3f}" for x in entry["o"])
        rows.append(f"| {step} | {names} | {entry['m']:.3f} | {entry['ell']:.3f} | ({o}) |")
    return "\n".join(rows)


__all__ += ["club_accuracy_table", "club_readout_table"]


def club_accuracy_table(accuracy: dict, fmt: str = "{:.3f}") -> str:
    """One row per model: mean, standard deviation, lowest and highest accuracy over the seeds."""
    rows = ["| model | mean | standard deviation | lowest | highest |",
            "| --- | --- | --- | --- | --- |"]
    for name, values in accuracy.items():
        v = np.asarray(values, dtype=float)  # (seeds,)
        cells = " | ".join(fmt.format(x) for x in (v.mean(), v.std(), v.min(), v.max()))
        rows.append(f"| {name} | {cells} |")
    return "\n".join(rows)


def club_readout_table(summary: dict, fmt: str = "{:.3f}") -> str:
    """One row per (model, attention, before/after): the graph tools' readouts, seed means.

    The headers are short (*own faction*: the mass on it; *ARI* of the spectral split; *Mr. Hi*,
    *Officer*: their PageRank) and a row is named in one cell, "GAT, layer 1, before", so the
    table fits a phone's column; the page defines the headers above it."""
    rows = ["| | own faction | ARI | Mr. Hi | Officer |", "| --- | --- | --- | --- | --- |"]
    for (kind, what, when), r in summary.items():
        cells = " | ".join(fmt.format(r[k]) for k in ("same_faction", "ari", "pagerank_0",
                                                      "pagerank_33"))
        rows.append(f"| {kind}, {what}, {when} | {cells} |")
    return "\n".join(rows)


def pattern_table(comparison: dict[str, dict[int, dict]], measure: str = "edges") -> str:
    """One row per pattern, one column per n: its edges (``measure="edges"``) or its maximum path
    length (``"max_path"``), from :func:`attention_graph.patterns.compare_patterns`. One measure a
    table, so each fits a phone's column."""
    if measure not in ("edges", "max_path"):
        raise ValueError(f'measure must be "edges" or "max_path"; got {measure!r}')
    names = list(comparison)
    ns = list(comparison[names[0]])
    head = "| pattern | " + " | ".join(f"$n = {n}$" for n in ns) + " |"
    rule = "| --- |" + " ---: |" * len(ns)
    rows = [f"| {name} | " + " | ".join(f"{comparison[name][n][measure]:,}" for n in ns) + " |" for name in names]
    return "\n".join([head, rule, *rows])


# --------------------------------------------------------------------------------------------------
# Numbers as prose (glued with {glue:text})
# --------------------------------------------------------------------------------------------------


def pair_words(a: float, b: float, spec: str = ".3f", *, same: str = "both {}", differ: str = "{} and {}") -> str:
    """Two computed numbers as a sentence says them: ``same`` with the one value when they print
    alike at ``spec`` (equal values are said to be equal), else ``differ`` with both.

    For a range, pass its ends: ``pair_words(min(x), max(x), differ="between {} and {}")``.

    >>> pair_words(1.4142135, 1.4142136), pair_words(0.1, 0.25, ".2f", differ="between {} and {}")
    ('both 1.414', 'between 0.10 and 0.25')
    """
    first, second = format(float(a), spec), format(float(b), spec)
    return same.format(first) if first == second else differ.format(first, second)
