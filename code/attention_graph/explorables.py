"""The states of the explorable figures: built here, checked against a declared schema, glued as HTML.

An explorable (``book/_ext/explorables.py``) is a figure's interactive twin. Its page glues
``HTML(explorable_data(name, state))``, where ``state`` comes from this module's function for it
(:func:`worked_state`, :func:`softmax_state`, ...). :data:`SCHEMAS` declares each state's keys, the
types of their values and their shapes; :func:`check_state` enforces it when the state is built, and
:func:`explorable_data` writes the schema beside the state, so ``book/_ext/static/explore.js``
checks the same schema on load (``AttentionExplore.checkState``) before the explorable's own
JavaScript reads a key. The tests import the settings below (the sliders' values, the seeds) from
here rather than retype them.

A schema is JSON. A leaf is a string: a type, ``number`` (finite), ``int``, ``string`` or ``bool``,
followed by a shape in brackets for nested lists, ``"number[n, 2]"``; a dimension is a number, a
name (the same name is the same length everywhere in one state) or ``*`` (any length). A dict is an
object with exactly its keys; ``{"$list": schema, "$length": dim}`` a list of items of one schema;
``{"$map": schema}`` an object with any keys and values of one schema.
"""

from __future__ import annotations

import json
import re
from html import escape

import numpy as np

from . import worked_example
from .blockwise import online_trace
from .graph import MODEL_NAMES, fixed_to_computed
from .karate import club_graph
from .patterns import max_path_length, named_patterns
from .plots.graphs import circle_layout, club_layout
from .softmax import raw_score_row

__all__ = ["SCHEMAS", "check_state", "explorable_data", "worked_state", "softmax_state", "fixed_state",
           "online_state", "patterns_state", "karate_state"]

# --------------------------------------------------------------------------------------------------
# The settings each explorable offers (the tests import these)
# --------------------------------------------------------------------------------------------------

SOFTMAX_DIMS = (1, 4, 16, 64, 256, 1024)  # the dimensions of book/softmax.md's peakedness figure
SOFTMAX_N_K, SOFTMAX_SEED, SOFTMAX_D = 16, 2018, 64  # keys of one row, its seed, the first d shown
FIXED_TS = tuple(k / 10 for k in range(21))  # t = 0, 0.1, ..., 2 along the path of fixed_to_computed
ONLINE_BLOCK_SIZE = 1  # the trace the page's table shows
PATTERN_NS, PATTERN_WS = (4, 8, 12, 16, 20, 24), (1, 2, 3, 4)  # n and the window w of the sliders
KARATE_SEEDS = tuple(range(20))  # the seeds of the projections, those of the page's seed sweep

# --------------------------------------------------------------------------------------------------
# The schemas
# --------------------------------------------------------------------------------------------------

SCHEMAS: dict[str, dict] = {
    "worked": {"labels": "string[n]", "X": "number[n, 2]", "layout": "number[n, 2]"},
    "softmax": {"dims": "int[k]", "rows": "number[k, n_k]", "d": "int"},
    "fixed": {"labels": "string[n]", "layout": "number[n, 2]", "ts": "number[t]", "start": "number",
              "states": {"$list": {"W": "number[n, n]", "Y": "number[n, 2]"}, "$length": "t"},
              "model_names": "string[m]", "models": {"$map": "number[n, n]"}},
    "online": {"labels": "string[n]", "query": "int", "X": "number[n, d]", "dense": "number[d]",
               "block_size": "int"},
    "patterns": {"ns": "int[a]", "ks": "int[b]", "n": "int", "k": "int",
                 "states": {"$map": {"$map": {"mask": "string[*]", "edges": "int", "max_path": "int"}}}},
    "karate": {"labels": "string[n]", "club": "int[n]", "layout": "number[n, 2]", "friends": "int[e, 2]",
               "seeds": {"$list": {"seed": "int", "ari": "number", "wrong": "int[*]", "mutual": "number[e]"},
                         "$length": "s"},
               "start": "int"},
}

ARTICLE = {"number": "a finite number", "int": "an int", "string": "a string", "bool": "a bool"}
_LEAF = re.compile(r"(number|int|string|bool)(?:\[([^\]]*)\])?")


def _scalar_ok(kind: str, x) -> bool:
    if kind == "bool":
        return isinstance(x, bool)
    if kind == "string":
        return isinstance(x, str)
    if isinstance(x, bool):
        return False
    if kind == "int":
        return isinstance(x, int)
    return isinstance(x, (int, float)) and bool(np.isfinite(x))


def _check(x, schema, where: str, sizes: dict) -> None:
    """Raise ValueError naming ``where`` if ``x`` does not match ``schema``; binds named sizes."""

    def size(dim: str, got: int, what: str) -> None:
        dim = dim.strip()
        if dim == "*":
            return
        want = int(dim) if dim.isdigit() else sizes.setdefault(dim, got)
        if got != want:
            raise ValueError(f"{what} has length {got}; the schema wants {dim} = {want}")

    if isinstance(schema, str):
        match = _LEAF.fullmatch(schema)
        if not match:
            raise ValueError(f"schema at {where}: {schema!r} is not a type")
        kind, dims = match.group(1), match.group(2)
        shape = [d for d in dims.split(",")] if dims else []

        def leaf(y, axis: int, at: str) -> None:
            if axis == len(shape):
                if not _scalar_ok(kind, y):
                    raise ValueError(f"{at} must be {ARTICLE[kind]}; "
                                     f"got {y!r}")
                return
            if not isinstance(y, list):
                raise ValueError(f"{at} must be a list (shape [{dims}]); got {type(y).__name__}")
            size(shape[axis], len(y), at)
            for k, item in enumerate(y):
                leaf(item, axis + 1, f"{at}[{k}]")

        leaf(x, 0, where)
    elif "$list" in schema:
        if not isinstance(x, list):
            raise ValueError(f"{where} must be a list; got {type(x).__name__}")
        size(str(schema.get("$length", "*")), len(x), where)
        for k, item in enumerate(x):
            _check(item, schema["$list"], f"{where}[{k}]", sizes)
    elif "$map" in schema:
        if not isinstance(x, dict):
            raise ValueError(f"{where} must be an object; got {type(x).__name__}")
        for key, item in x.items():
            _check(item, schema["$map"], f"{where}[{key!r}]", sizes)
    else:
        if not isinstance(x, dict):
            raise ValueError(f"{where} must be an object; got {type(x).__name__}")
        missing, extra = sorted(set(schema) - set(x)), sorted(set(x) - set(schema))
        if missing or extra:
            raise ValueError(f"{where} must have the keys {sorted(schema)}; missing {missing}, unknown {extra}")
        for key, sub in schema.items():
            _check(x[key], sub, f"{where}.{key}", sizes)


def check_state(name: str, state: dict) -> dict:
    """``state`` unchanged if it matches ``SCHEMAS[name]``; else a ValueError naming the key at fault.

    >>> check_state("worked", {"labels": ["a"], "X": [[0, 1]], "layout": [[0.0, 1.0]]})["layout"]
    [[0.0, 1.0]]
    """
    if name not in SCHEMAS:
        raise ValueError(f"name must be an explorable of SCHEMAS ({', '.join(SCHEMAS)}); got {name!r}")
    if not isinstance(state, dict):
        raise TypeError(f"state must be a dict; got {type(state).__name__}")
    _check(state, SCHEMAS[name], name, {})
    return state


def explorable_data(name: str, state: dict) -> str:
    """``state``, checked against its schema, as the JSON script the explorable ``name`` reads: floats
    exactly, as Python prints them; the schema rides along (``data-explorable-schema``) for explore.js.
    """
    if not isinstance(name, str) or not name.replace("-", "").isalnum():
        raise ValueError(f"name must be letters, digits and hyphens; got {name!r}")
    check_state(name, state)
    text = json.dumps(state, allow_nan=False).replace("<", "\\u003c")  # no "</script>" inside
    schema = escape(json.dumps(SCHEMAS[name], separators=(",", ":")), quote=True)
    return (f'<script type="application/json" data-explorable-state="{name}" '
            f'data-explorable-schema="{schema}">{text}</script>')


# --------------------------------------------------------------------------------------------------
# One function per explorable: its state, checked
# --------------------------------------------------------------------------------------------------


def worked_state(X=None) -> dict:
    """The worked example's four people: their vectors X (the book's by default) and the graph figure's
    node positions; the page's JavaScript computes the rest (W, Y, the out-strengths) as X moves."""
    X = worked_example.embeddings() if X is None else np.asarray(X, dtype=float)  # (4, 2)
    labels = list(worked_example.PEOPLE)
    return check_state("worked", {"labels": labels, "X": X.tolist(), "layout": circle_layout(len(labels)).tolist()})


def softmax_state(dims=SOFTMAX_DIMS, n_k: int = SOFTMAX_N_K, seed: int = SOFTMAX_SEED, d: int = SOFTMAX_D) -> dict:
    """One raw row of n_k scores q·k_j per dimension of ``dims`` (one generator, seeded, in that order);
    ``d`` the dimension shown first."""
    rng = np.random.default_rng(seed)
    rows = [raw_score_row(int(k), int(n_k), rng).tolist() for k in dims]  # one (n_k,) row per d
    if d not in dims:
        raise ValueError(f"d must be one of dims {list(dims)}; got {d!r}")
    return check_state("softmax", {"dims": [int(k) for k in dims], "rows": rows, "d": int(d)})


def fixed_state(X, A, models: dict, ts=FIXED_TS, labels=worked_example.PEOPLE) -> dict:
    """The path from mean aggregation (t = 0) through masked attention (1) to attention (2):
    W(t) and Y(t) of :func:`fixed_to_computed` at each t of ``ts``, and the weights of the
    five models of :func:`graph.five_models` (``models``, as it returns them)."""
    if set(models) != set(MODEL_NAMES):
        raise ValueError(f"models must be graph.five_models' {list(MODEL_NAMES)}; got {list(models)}")
    path = [fixed_to_computed(X, A, t, labels) for t in ts]
    return check_state("fixed", {
        "labels": list(labels), "layout": circle_layout(len(labels)).tolist(), "ts": [float(t) for t in ts],
        "start": float(ts[0]), "states": [{"W": g.W.tolist(), "Y": Y.tolist()} for Y, g in path],
        "model_names": list(MODEL_NAMES),
        "models": {name: models[name][1].W.tolist() for name in MODEL_NAMES}})


def online_state(query: str = "Ana", block_size: int = ONLINE_BLOCK_SIZE) -> dict:
    """One person's query reading the worked example's keys a block at a time: X (keys and values),
    the dense output for that query, and the block size of the trace shown first."""
    X = worked_example.embeddings()  # (4, 2)
    i = worked_example.index(query)
    dense = worked_example.attention_layer()[0][i]  # (2,), the book's layer on X
    online_trace(X[i], X, X, block_size=block_size)  # the trace exists at this block size
    return check_state("online", {"labels": list(worked_example.PEOPLE), "query": int(i), "X": X.tolist(),
                                  "dense": dense.tolist(), "block_size": int(block_size)})


def pattern_masks(n: int, w: int, n_global: int, n_random: int, seed: int) -> dict:
    """Each pattern of :func:`named_patterns`: its mask (one string of 0/1 per query), its
    edge count and its maximum path length."""
    out = {}
    for name, E in named_patterns(n, w, n_global, n_random, seed).items():
        M = np.zeros((n, n), dtype=int)  # (n, n)
        M[E[:, 0], E[:, 1]] = 1
        out[name] = {"mask": ["".join(map(str, row)) for row in M], "edges": int(len(E)),
                     "max_path": int(max_path_length(E, n))}
    return out


def patterns_state(n: int, w: int, n_global: int, n_random: int, seed: int,
                   ns=PATTERN_NS, ws=PATTERN_WS) -> dict:
    """The patterns at every (n, w) of the sliders; (n, w) is the figure's, shown first."""
    if n not in ns or w not in ws:
        raise ValueError(f"n and w must be among the sliders' {list(ns)} and {list(ws)}; got {n}, {w}")
    return check_state("patterns", {
        "ns": [int(x) for x in ns], "ks": [int(x) for x in ws], "n": int(n), "k": int(w),
        "states": {f"{a},{b}": pattern_masks(a, b, n_global, n_random, seed) for a in ns for b in ws}})


def karate_state(runs: list[dict], start: int, seeds=KARATE_SEEDS) -> dict:
    """The club under each run of :func:`karate.club_run` (``runs``, one per seed of ``seeds``, in
    order): the mutual attention (W + Wᵀ)/2 on each friendship, the members its communities
    misplace and the ARI. Members are named from 1, as in the book."""
    if [r["seed"] for r in runs] != list(seeds):
        raise ValueError(f"runs must be one club_run per seed of {list(seeds)}; got seeds {[r['seed'] for r in runs]}")
    A, club, labels = club_graph()
    friends = [(int(i), int(j)) for i, j in zip(*np.nonzero(np.triu(A, k=1)))]  # i < j

    def seed_state(r: dict) -> dict:
        f = r["found"]
        misplaced = np.flatnonzero(f != club) if f[0] == club[0] else np.flatnonzero(f == club)
        A_s = (r["graph"].W + r["graph"].W.T) / 2  # (n, n)
        return {"seed": int(r["seed"]), "ari": float(r["ari"]), "wrong": misplaced.tolist(),
                "mutual": [float(A_s[i, j]) for i, j in friends]}

    if start not in seeds:
        raise ValueError(f"start must be one of the seeds {list(seeds)}; got {start!r}")
    names = [str(int(v) + 1) for v in labels]  # the members as the book names them: 1 … n
    return check_state("karate", {"labels": names, "club": club.tolist(), "layout": club_layout().tolist(),
                                  "friends": [list(p) for p in friends], "seeds": [seed_state(r) for r in runs],
                                  "start": int(start)})
