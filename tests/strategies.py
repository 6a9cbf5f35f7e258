"""Hypothesis strategies for the property-based tests of the derivation chapters.

Two kinds, used together:

* ``matrices`` draws a shape, a seed, a magnitude and a "ties" flag, and builds the array with NumPy:
  cheap enough for many cases per property (``MANY``), from tiny to huge magnitudes, with
  repeated entries when ``ties`` is drawn;
* ``edge_matrices`` lets Hypothesis choose every entry itself (zeros, subnormals, ±1e300, repeated
  values) and shrink a failure to a minimal example; it is slower, so it runs fewer cases (``EDGE``).

How many is the Hypothesis profile's choice (``HYPOTHESIS_PROFILE``, see ``tests/conftest.py``).
"""

from __future__ import annotations

import numpy as np
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

# The number of examples comes from the Hypothesis profile (tests/conftest.py); ``MANY`` properties
# run cheap NumPy-built cases, ``EDGE`` ones slower entry-by-entry cases, a fifth as many.
MANY = settings()
EDGE = settings(max_examples=max(1, settings().max_examples // 5))


@st.composite
def matrices(draw, rows=(1, 6), cols=(1, 8), log10_scale=(-3, 2), shape=None):
    """A float64 matrix: N(0, 1) entries times 10**k for a drawn k, rounded to ties when drawn."""
    if shape is None:
        shape = (draw(st.integers(*rows)), draw(st.integers(*cols)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    scale = 10.0 ** draw(st.integers(*log10_scale))
    M = rng.standard_normal(shape)  # shape
    if draw(st.booleans()):
        M = np.round(M)  # few distinct values: ties in most rows
    return M * scale


@st.composite
def masks(draw, shape):
    """A boolean mask of ``shape`` allowing at least one key in every row."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    mask = rng.random(shape) < draw(st.floats(0.1, 0.9))  # shape
    mask[np.arange(shape[0]), rng.integers(0, shape[1], size=shape[0])] = True
    return mask


def edge_matrices(bound=1e300, rows=(1, 5), cols=(1, 6)):
    """Matrices whose every entry Hypothesis picks, within ±``bound``."""
    shapes = st.tuples(st.integers(*rows), st.integers(*cols))
    return shapes.flatmap(lambda s: arrays(np.float64, s, elements=st.floats(-bound, bound)))


@st.composite
def permutations(draw, n):
    """A permutation of range(n) as an index array, and its permutation matrix P (P @ A = A[perm])."""
    perm = np.array(draw(st.permutations(range(n))), dtype=np.int64)  # (n,)
    P = np.eye(n)[perm]  # (n, n)
    return perm, P


def assert_close(actual, expected, rtol=1e-12, atol=0.0):
    """|actual − expected| <= atol + rtol |expected| everywhere: a fast assert for thousands of cases
    (``np.testing.assert_allclose`` costs more than the function under test)."""
    actual, expected = np.asarray(actual, dtype=float), np.asarray(expected, dtype=float)
    actual, expected = np.broadcast_arrays(actual, expected)
    err = np.abs(actual - expected)
    ok = err <= atol + rtol * np.abs(expected)
    if not ok.all():
        k = np.unravel_index(np.argmax(np.where(ok, -np.inf, err)), err.shape)
        raise AssertionError(f"not close at {tuple(int(i) for i in k)}: {actual[k]!r} vs {expected[k]!r} "
                             f"(rtol={rtol}, atol={atol}); {int((~ok).sum())} entries differ")


def assert_equal(actual, expected):
    """Exact equality, entry by entry, with the first differing entry in the message."""
    actual, expected = np.broadcast_arrays(np.asarray(actual), np.asarray(expected))
    bad = actual != expected
    if bad.any():
        k = tuple(int(i) for i in np.argwhere(bad)[0])
        raise AssertionError(f"differ at {k}: {actual[k]!r} vs {expected[k]!r}")
