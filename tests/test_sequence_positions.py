"""Positions in a sequence: sinusoidal encodings, RoPE, ALiBi and the distance bias, against the papers'
formulas written independently (below, and tests/oracles.py) and by their defining properties."""

import importlib
import math

import networkx as nx
import numpy as np
import pytest
import sympy as sp

import attention_graph as ag
import booktools as bt
import oracles
from attention_graph import (
    alibi_bias,
    attention,
    distance_bias,
    registry,
    rotary,
    shortest_path_distances,
    sinusoidal_encoding,
)
from bad_inputs import nan, ok, path

PAGE = "sequence_positions"


# Independent implementations from the papers' formulas, used by this file only.

def sinusoidal(n: int, d: int, base: float = 10000.0) -> np.ndarray:
    """Vaswani et al. (2017), section 3.5: PE(pos, 2i) = sin(pos / base^(2i/d)), PE(pos, 2i+1) = cos(...)."""
    P = np.zeros((n, d))
    for pos in range(n):
        for i in range(d // 2):
            P[pos, 2 * i] = math.sin(pos / base ** (2 * i / d))
            P[pos, 2 * i + 1] = math.cos(pos / base ** (2 * i / d))
    return P


def rope_complex(X, positions, base: float = 10000.0) -> np.ndarray:
    """Su et al. (2021), eq. 34 in complex form: pair (x_2l, x_2l+1) as x_2l + i x_2l+1, times e^{i m θ_l},
    θ_l = base^(−2l/d)."""
    X = np.asarray(X, dtype=float)
    d = X.shape[1]
    z = X[:, 0::2] + 1j * X[:, 1::2]
    theta = base ** (-2.0 * np.arange(d // 2) / d)
    z = z * np.exp(1j * np.outer(np.asarray(positions, dtype=float), theta))
    out = np.empty_like(X)
    out[:, 0::2], out[:, 1::2] = z.real, z.imag
    return out


def alibi(n: int, slope: float) -> np.ndarray:
    """Press et al. (2022): add slope · (j − i) to the score of query i and key j <= i; mask j > i."""
    B = np.full((n, n), -np.inf)
    for i in range(n):
        for j in range(i + 1):
            B[i, j] = slope * (j - i)
    return B


def bfs_distances(A) -> np.ndarray:
    """Hop counts by networkx's breadth-first search on the directed graph of A_ij > 0; inf if none."""
    A = np.asarray(A)
    G = nx.DiGraph()
    G.add_nodes_from(range(len(A)))
    G.add_edges_from(zip(*np.nonzero(A > 0)))
    D = np.full(A.shape, np.inf)
    for s, row in nx.all_pairs_shortest_path_length(G):
        for t, hops in row.items():
            D[s, t] = hops
    return D


@pytest.mark.parametrize("n, d, base", [(1, 2, 10000.0), (7, 6, 10000.0), (50, 16, 100.0)])
def test_sinusoidal_encoding_is_the_papers(n, d, base):
    np.testing.assert_allclose(sinusoidal_encoding(n, d, base), sinusoidal(n, d, base), rtol=0, atol=1e-12)


def test_thm_sinusoidal_offset():
    assert bt.verified("thm-sinusoidal-offset") >= 1
    P = sinusoidal(40, 10)
    G = P @ P.T
    for i in range(40):
        for j in range(40):
            assert G[i, j] == pytest.approx(sum(np.cos((i - j) * 10000.0 ** (-2 * l / 10)) for l in range(5)),
                                            abs=1e-12)
    # A Toeplitz matrix, not a circulant one: the frequencies are not the cycle's.
    assert abs(G[0, 1] - G[0, 39]) > 1e-3


@pytest.mark.parametrize("seed", range(4))
def test_rotary_is_the_complex_rotation(seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((9, 8))
    pos = rng.integers(0, 1000, size=9)
    np.testing.assert_allclose(rotary(X, pos), rope_complex(X, pos), rtol=0, atol=1e-12)
    np.testing.assert_allclose(rotary(X, pos, base=50.0), rope_complex(X, pos, base=50.0), rtol=0, atol=1e-12)


def test_thm_rope_relative():
    assert bt.verified("thm-rope-relative") >= 1
    rng = np.random.default_rng(7)
    Q, K = rng.standard_normal((10, 6)), rng.standard_normal((10, 6))
    pos = np.arange(10)
    S = rope_complex(Q, pos) @ rope_complex(K, pos).T
    for shift in (1, 13, 500):
        np.testing.assert_allclose(rotary(Q, pos + shift) @ rotary(K, pos + shift).T, S, rtol=0, atol=1e-11)
    np.testing.assert_allclose(np.linalg.norm(rotary(Q, pos), axis=1), np.linalg.norm(Q, axis=1), rtol=1e-14)
    # The score of q at i and k at j is that of q at 0 and k at j − i.
    for i, j in [(3, 7), (9, 2)]:
        s = rotary(Q[i:i + 1], [i]) @ rotary(K[j:j + 1], [j]).T
        s0 = Q[i:i + 1] @ rotary(K[j:j + 1], [j - i]).T
        assert s[0, 0] == pytest.approx(s0[0, 0], abs=1e-12)


def test_rotary_keeps_float32():
    X = np.ones((3, 4), dtype=np.float32)
    assert rotary(X, [0, 1, 2]).dtype == np.float32


@pytest.mark.parametrize("n, slope", [(1, 0.5), (6, 0.25), (9, 1.0 / 3)])
def test_alibi_bias_is_the_papers(n, slope):
    np.testing.assert_array_equal(alibi_bias(n, slope), alibi(n, slope))


def test_alibi_is_the_distance_bias_of_the_path_on_the_causal_edges():
    n = 8
    A = np.eye(n, k=1) + np.eye(n, k=-1)  # the path
    np.testing.assert_array_equal(shortest_path_distances(A), bfs_distances(A))
    causal = np.tril(np.ones((n, n), dtype=bool))
    np.testing.assert_array_equal(np.where(causal, distance_bias(A, 0.5), -np.inf), alibi_bias(n, 0.5))


def test_distance_bias_on_a_disconnected_directed_graph():
    A = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0.0]])  # 0 → 1 → 2
    np.testing.assert_array_equal(shortest_path_distances(A), bfs_distances(A))
    B = distance_bias(A, 2.0)
    np.testing.assert_array_equal(B, [[0, -2, -4], [-np.inf, 0, -2], [-np.inf, -np.inf, 0]])
    assert not np.signbit(np.diag(B)).any()  # 0, not −0
    Y, W = attention(np.eye(3), np.eye(3), np.eye(3), bias=B)
    assert (W[np.isneginf(B)] == 0).all()


def test_eq_sinusoidal_and_eq_alibi_checks_hold():
    assert bt.verified("eq-sinusoidal") >= 1 and bt.verified("eq-alibi") >= 1


# --- What the page shows ------------------------------------------------------------------------------

@pytest.mark.build
def test_page_sinusoidal_numbers():
    n, d = int(bt.glued_float(PAGE, "pos_n")), int(bt.glued_float(PAGE, "pos_d"))
    P = sinusoidal(n, d)
    G = P @ P.T
    assert bt.glued_float(PAGE, "pos_toeplitz_gap") < 1e-12
    assert bt.glued_float(PAGE, "pos_norm2") == pytest.approx(d / 2, abs=1e-12)
    assert bt.glued_float(PAGE, "pos_g01") == pytest.approx(G[0, 1], abs=1e-12)
    assert bt.glued_float(PAGE, "pos_g0last") == pytest.approx(G[0, n - 1], abs=1e-12)
    assert abs(G[0, 1] - G[0, n - 1]) > 0.5  # the prose: the kernel does not wrap around


@pytest.mark.build
def test_page_rope_and_alibi_numbers():
    assert bt.glued_float(PAGE, "rope_shift_gap") < 1e-12
    assert bt.glued_float(PAGE, "rope_norm_gap") < 1e-14
    n, slope = int(bt.glued_float(PAGE, "alibi_n")), bt.glued_float(PAGE, "alibi_slope")
    X = np.zeros((n, 4))
    _, W = oracles.biased_attention(X, X, X, alibi(n, slope))
    assert bt.glued_float(PAGE, "alibi_ratio") == pytest.approx(np.exp(slope), rel=1e-12)
    assert bt.glued_float(PAGE, "alibi_exp") == pytest.approx(np.exp(slope), rel=1e-15)
    assert bt.glued_float(PAGE, "alibi_first") == pytest.approx(W[-1, 0], rel=1e-12)


@pytest.mark.build
def test_page_graphormer_numbers_on_the_club():
    from attention_graph import karate, laplacian_pe

    A, _, _ = karate.club_graph()
    D = bfs_distances(A)
    X = laplacian_pe(A, 4)
    _, W_plain = oracles.attention(X, X, X)
    _, W_bias = oracles.biased_attention(X, X, X, -2.0 * D)
    q = int(bt.glued_float(PAGE, "gb_query"))
    friends, near = D[q] == 1, D[q] <= 2
    assert bt.glued_float(PAGE, "gb_friends") == friends.sum() == 16
    assert bt.glued_float(PAGE, "gb_diameter") == D.max()
    assert bt.glued_float(PAGE, "gb_plain_friends") == pytest.approx(W_plain[q, friends].sum(), abs=1e-12)
    assert bt.glued_float(PAGE, "gb_biased_friends") == pytest.approx(W_bias[q, friends].sum(), abs=1e-12)
    assert bt.glued_float(PAGE, "gb_plain_near") == pytest.approx(W_plain[q, near].sum(), abs=1e-12)
    assert bt.glued_float(PAGE, "gb_biased_near") == pytest.approx(W_bias[q, near].sum(), abs=1e-12)
    assert W_bias[q, friends].sum() > W_plain[q, friends].sum()  # the prose: the bias concentrates


@pytest.mark.build
def test_exercise_alibi_closed_form():
    closed = np.exp(-7.0) / np.exp(-np.arange(8.0)).sum()
    assert bt.glued_float(PAGE, "ex_alibi_first") == pytest.approx(closed, rel=1e-12)
    assert bt.glued_float(PAGE, "ex_alibi_closed") == pytest.approx(closed, rel=1e-15)


@pytest.mark.build
def test_exercise_alibi_reach():
    """The nearest n_half tokens hold 1 − e^{−ζ n_half} of a long sequence's last row, from the closed form."""
    zeta, n = 0.5, 64
    shares = np.cumsum(np.exp(-zeta * np.arange(n))) / np.exp(-zeta * np.arange(n)).sum()
    n_half = int(np.ceil(np.log(2) / zeta))
    assert bt.glued_float(PAGE, "ex_reach_bound") == pytest.approx(np.log(2) / zeta, rel=1e-15)
    assert bt.glued_float(PAGE, "ex_reach_count") == n_half == np.argmax(shares >= 0.5) + 1
    assert bt.glued_float(PAGE, "ex_reach_share") == pytest.approx(shares[n_half - 1], abs=1e-15)
    assert shares[n_half - 1] >= 0.5
    assert bt.glued_float(PAGE, "ex_reach_share_less") == pytest.approx(shares[n_half - 2], abs=1e-15)
    assert shares[n_half - 2] < 0.5
    assert shares[n_half - 1] == pytest.approx(1 - np.exp(-zeta * n_half), abs=1e-12)  # 64 tokens: long enough


# --- Broken variants ------------------------------------------------------------------------------

sq = importlib.import_module("attention_graph.sequence_positions")


_sq_rotate = sq.rotate_pairs


_sq_alibi = sq.alibi_kernel


# label: (module, name, wrong value, what is broken); gathered by tests/test_can_fail.py
BROKEN = {
    "eq-sinusoidal": (sq, "sinusoidal_kernel", lambda p, w: np.column_stack(
        [np.sin(np.outer(p, w)), np.cos(np.outer(p, w))]), "the sines first, then the cosines"),
    "thm-sinusoidal-offset": (sq, "sinusoidal_kernel", lambda p, w: np.column_stack(
        [np.sin(np.outer(p, w)), np.cos(np.outer(p, w))]) * (1 + np.asarray(p)[:, None] / 10),
                              "an amplitude that grows with the position"),
    "thm-rope-relative": (sq, "rotate_pairs", lambda X, theta: _sq_rotate(X, theta**2 / 7),
                          "angles quadratic in the position"),
    "eq-alibi": (sq, "alibi_kernel", lambda n, slope: _sq_alibi(n, slope).T, "the bias of the keys ahead, not behind"),
}


# Each part of the check of thm-sinusoidal-offset can fail: a wrong display or a wrong package, each
# caught first by the part named (the parts in the order the check gives them).
def _display_times(factor):
    """The displayed eq-sinusoidal with its right side multiplied by ``factor(i)``, i the token."""
    shown = sq.display_sinusoidal()
    i = next(x for x in shown.rhs.free_symbols if x.name == "i")
    return lambda: sp.Eq(shown.lhs, shown.rhs * factor(i), evaluate=False)


_sq_kernel = sq.sinusoidal_kernel

SINUSOIDAL_OFFSET_PARTS = [  # (name replaced, wrong value, the part that catches it first, what is broken)
    ("display_sinusoidal", _display_times(lambda i: i), 0, "an amplitude that grows with the position, shown"),
    ("display_sinusoidal", _display_times(lambda i: 2), 1, "the display twice too large: still a kernel of i − j"),
    ("sinusoidal_kernel", BROKEN["thm-sinusoidal-offset"][2], 2, "an amplitude that grows with the position"),
    ("sinusoidal_kernel", lambda p, w: 2 * _sq_kernel(p, w), 3, "encodings twice too large: still shift-invariant"),
]


@pytest.mark.parametrize("name, wrong, part, what", SINUSOIDAL_OFFSET_PARTS,
                         ids=[r[3] for r in SINUSOIDAL_OFFSET_PARTS])
def test_each_part_of_the_sinusoidal_offset_check_can_fail(monkeypatch, name, wrong, part, what):
    assert bt.verified("thm-sinusoidal-offset") == len(SINUSOIDAL_OFFSET_PARTS)  # one row per part
    monkeypatch.setattr(sq, name, wrong)
    with pytest.raises(registry.DerivationError, match=f"thm-sinusoidal-offset: statement {part} does not hold"):
        registry.verify("thm-sinusoidal-offset")


# --- Bad inputs --------------------------------------------------------------------------------

# (function name, call, error type, message fragment); gathered by tests/test_validation.py
BAD = [
    ("sinusoidal_encoding", lambda: ag.sinusoidal_encoding(4, 3), ValueError, "d must be an even integer"),
    ("sinusoidal_encoding", lambda: ag.sinusoidal_encoding(0, 4), ValueError, "n must be a positive integer"),
    ("sinusoidal_encoding", lambda: ag.sinusoidal_encoding(4, 4, base=1.0),
     ValueError, "base must be a finite real number > 1"),
    ("sinusoidal_encoding", lambda: ag.sinusoidal_encoding(4, 4, base="10000"),
     TypeError, "base must be a real number"),
    ("rotary", lambda: ag.rotary(np.ones((3, 3)), [0, 1, 2]),
     ValueError, "X's number of columns d must be an even integer"),
    ("rotary", lambda: ag.rotary(ok, [0, 1]), ValueError, "positions must have one entry per row of X: 2 != 3"),
    ("rotary", lambda: ag.rotary(ok, [[0, 1, 2]]), ValueError, "positions must be a 1-d array"),
    ("rotary", lambda: ag.rotary(ok, [0, np.nan, 2]), ValueError, "positions must be finite"),
    ("rotary", lambda: ag.rotary(nan, [0, 1, 2]), ValueError, "X must be finite"),
    ("alibi_bias", lambda: ag.alibi_bias(4, -0.5), ValueError, "slope must be a finite real number >= 0"),
    ("alibi_bias", lambda: ag.alibi_bias(4, np.inf), ValueError, "slope must be a finite real number >= 0"),
    ("alibi_bias", lambda: ag.alibi_bias(4, None), TypeError, "slope must be a real number"),
    ("alibi_bias", lambda: ag.alibi_bias(2.5, 0.5), TypeError, "n must be a positive integer"),
    ("shortest_path_distances", lambda: ag.shortest_path_distances(np.ones((2, 3))), ValueError, "A must be square"),
    ("shortest_path_distances", lambda: ag.shortest_path_distances(-path), ValueError, "A must be non-negative"),
    ("distance_bias", lambda: ag.distance_bias(path, -1.0), ValueError, "slope must be a finite real number >= 0"),
    ("distance_bias", lambda: ag.distance_bias(np.full((2, 2), np.nan), 1.0), ValueError, "A must be finite"),
]
