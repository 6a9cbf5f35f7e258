"""The whole layer: attention(Q, K, V) returns (Y, W) with W = softmax(Q Kᵀ/√d) and Y = W V."""

import importlib

import mpmath
import numpy as np
import pytest
import scipy.optimize
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

import attention_graph as ag
import booktools as bt
import oracles
from attention_graph import attention, attention_exact, pull, weighted_sum
from attention_graph.attention import ulps_from_exact
from attention_graph.plots import convex_hull_2d, plot_pull
from bad_inputs import all_true, cplx, empty_row, inf, nan, ok
from strategies import MANY, assert_close, masks, matrices, permutations


def test_attention_is_softmax_of_scaled_scores_times_values():
    rng = np.random.default_rng(2)
    Q, K, V = rng.standard_normal((3, 4)), rng.standard_normal((5, 4)), rng.standard_normal((5, 2))
    Y, W = attention(Q, K, V)
    np.testing.assert_allclose(W, oracles.softmax(Q @ K.T / 2.0), rtol=1e-13)  # √d = 2
    np.testing.assert_allclose(Y, W @ V, rtol=1e-13)
    assert Y.shape == (3, 2) and W.shape == (3, 5)


@pytest.mark.parametrize("shapes, message", [
    (((2, 3), (4, 3), (5, 2)), "K and V must have the same number of rows"),
    (((2, 3), (4, 2), (4, 2)), "share the dimension d"),
])
def test_attention_refuses_mismatched_shapes(shapes, message):
    Q, K, V = (np.ones(s) for s in shapes)
    with pytest.raises(ValueError, match=message):
        attention(Q, K, V)


def test_attention_refuses_nonfinite_values():
    with pytest.raises(ValueError, match="V must be finite"):
        attention(np.ones((1, 2)), np.ones((2, 2)), np.array([[1.0], [np.nan]]))


# ==================================================================================================
# The chapter's theorems, each tested under its label, property-based over thousands of cases.
# ==================================================================================================
att = importlib.import_module("attention_graph.attention")
PAGE = "attention"


_layer = oracles.attention


@st.composite
def qkv(draw, square=False):
    n_q = draw(st.integers(1, 6))
    n_k = n_q if square else draw(st.integers(1, 7))
    d, d_v = draw(st.integers(1, 4)), draw(st.integers(1, 3))
    Q = draw(matrices(shape=(n_q, d), log10_scale=(-2, 1)))
    K = draw(matrices(shape=(n_k, d), log10_scale=(-2, 1)))
    V = draw(matrices(shape=(n_k, d_v), log10_scale=(-2, 2)))
    return Q, K, V


DIRECTIONS = np.random.default_rng(2024).standard_normal((16, 3))  # (16, 3): fixed test directions


@MANY
@given(qkv(), st.data())
def test_thm_convex_combination(mats, data):
    Q, K, V = mats
    mask = data.draw(masks((Q.shape[0], K.shape[0]))) if data.draw(st.booleans()) else None
    Y, W = attention(Q, K, V, mask)
    allowed = np.ones(W.shape, bool) if mask is None else mask
    tol = 1e-12 * (1 + np.abs(V).max()) * V.shape[0]
    d_v = V.shape[1]
    # Coordinates and 16 fixed directions u: min_j u·v_j <= u·y_i <= max_j u·v_j over allowed keys j.
    U = np.vstack([np.eye(d_v), DIRECTIONS[:, :d_v]])  # (d_v + 16, d_v)
    for i in range(Y.shape[0]):
        proj_v = V[allowed[i]] @ U.T  # (allowed keys, directions)
        proj_y = U @ Y[i]  # (directions,)
        assert (proj_y >= proj_v.min(axis=0) - tol).all() and (proj_y <= proj_v.max(axis=0) + tol).all()
    # The weights are the convex coefficients: non-negative, summing to 1, zero on masked keys.
    assert (W >= 0).all() and (W[~allowed] == 0).all()
    assert_close(W.sum(axis=1), 1.0, atol=1e-14 * W.shape[1])


def test_thm_convex_combination_exact_hull_membership_by_linear_programming():
    """Hull membership decided exactly (a feasibility LP, scipy) on seeded cases of several shapes."""
    rng = np.random.default_rng(5)
    for n_q, n_k, d, d_v in [(3, 5, 2, 2), (4, 8, 3, 3), (5, 4, 4, 1), (2, 10, 2, 4)]:
        Q, K, V = rng.standard_normal((n_q, d)) * 3, rng.standard_normal((n_k, d)) * 3, rng.standard_normal((n_k, d_v))
        Y, _ = attention(Q, K, V)
        for y in Y:
            # Find λ >= 0 with Σλ = 1 and Vᵀλ = y.
            A_eq = np.vstack([V.T, np.ones((1, n_k))])
            res = scipy.optimize.linprog(np.zeros(n_k), A_eq=A_eq, b_eq=np.append(y, 1.0), bounds=(0, None))
            assert res.status == 0, res.message
        # A point outside the hull is refused by the same test: it can fail.
        far = V.max(axis=0) + 1.0
        res = scipy.optimize.linprog(np.zeros(n_k), A_eq=np.vstack([V.T, np.ones((1, n_k))]),
                                     b_eq=np.append(far, 1.0), bounds=(0, None))
        assert res.status == 2  # infeasible


@MANY
@given(qkv(square=True))
def test_thm_pull_toward_centre(mats):
    Q, K, V = mats
    Y, W = attention(Q, K, V)
    s, C = pull(W, V)
    n = len(V)
    # Independently: s_i = 1 − W_ii, c_i = Σ_{j≠i} W_ij v_j / s_i.
    assert_close(s, 1 - np.diag(W), atol=1e-14 * n)
    scale = 1 + np.abs(V).max()
    for i in range(n):
        if s[i] > 1e-6:
            others = [j for j in range(n) if j != i]
            c = W[i, others] @ V[others] / s[i]
            assert_close(C[i], c, rtol=1e-9, atol=1e-12 * scale / s[i])
        reach = np.linalg.norm(V - V[i], axis=1).max()
        assert np.linalg.norm(Y[i] - V[i]) <= s[i] * reach + 1e-12 * scale
    assert_close(V + s[:, None] * (C - V), Y, rtol=1e-9, atol=1e-12 * scale * n)
    assert_close(Y - V, (W[:, :, None] * (V[None, :, :] - V[:, None, :])).sum(axis=1), rtol=1e-9,
                 atol=1e-12 * scale * n)


@MANY
@given(qkv(square=True), st.data())
def test_permutation_equivariance_property(mats, data):
    """attention(PQ, PK, PV) permutes the outputs: thm-permutation-equivariance of the graph chapter."""
    Q, K, V = mats
    perm, P = data.draw(permutations(len(Q)))
    Y, W = attention(Q, K, V)
    Yp, Wp = attention(P @ Q, P @ K, P @ V)
    scale = 1 + np.abs(V).max()
    assert_close(Yp, Y[perm], rtol=1e-10, atol=1e-12 * scale)
    assert_close(Wp, W[perm][:, perm], rtol=1e-10, atol=1e-300)


@MANY
@given(qkv(), st.data())
def test_thm_key_value_permutation(mats, data):
    Q, K, V = mats
    perm, P = data.draw(permutations(len(K)))
    Y, W = attention(Q, K, V)
    Yk, Wk = attention(Q, P @ K, P @ V)
    assert_close(Yk, Y, rtol=1e-10, atol=1e-12 * (1 + np.abs(V).max()))
    assert_close(Wk, W[:, perm], rtol=1e-10, atol=1e-300)


@MANY
@given(qkv(), st.data())
def test_thm_key_value_permutation_with_a_mask_permuted_alike(mats, data):
    """The theorem's hypothesis: with a mask, its columns must move with the keys (M ↦ M Pᵀ)."""
    Q, K, V = mats
    mask = data.draw(masks((Q.shape[0], K.shape[0])))
    perm, P = data.draw(permutations(len(K)))
    Y, W = attention(Q, K, V, mask)
    Yk, Wk = attention(Q, P @ K, P @ V, mask[:, perm])
    assert_close(Yk, Y, rtol=1e-10, atol=1e-12 * (1 + np.abs(V).max()))
    assert_close(Wk, W[:, perm], rtol=1e-10, atol=1e-300)


def test_thm_key_value_permutation_needs_the_mask_permuted():
    """Without permuting the mask, a causal mask sees other keys: the outputs change."""
    Q = K = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])  # (3, 2)
    V = np.array([[0.0], [1.0], [2.0]])  # (3, 1)
    causal = np.tril(np.ones((3, 3), dtype=bool))  # (3, 3)
    P = np.eye(3)[[2, 0, 1]]  # (3, 3)
    Y, _ = attention(Q, K, V, causal)
    Yk, _ = attention(Q, P @ K, P @ V, causal)
    assert not np.allclose(Yk, Y)


@MANY
@given(qkv(), st.data())
def test_attention_matches_plain_numpy_with_masks(mats, data):
    Q, K, V = mats
    mask = data.draw(masks((Q.shape[0], K.shape[0])))
    Y, W = attention(Q, K, V, mask)
    Y0, W0 = _layer(Q, K, V, mask)
    assert (W[~mask] == 0.0).all()
    assert_close(W, W0, rtol=1e-12, atol=1e-300)
    assert_close(Y, Y0, rtol=1e-10, atol=1e-12 * (1 + np.abs(V).max()))


def test_weighted_sum_is_the_sum_formula():
    W = np.array([[0.5, 0.25, 0.25], [0.0, 1.0, 0.0]])
    V = np.array([[0.0, 0.0], [4.0, 0.0], [0.0, 4.0]])
    Y = weighted_sum(W, V)
    expected = [[sum(W[i, j] * V[j, c] for j in range(3)) for c in range(2)] for i in range(2)]
    np.testing.assert_array_equal(Y, expected)


@pytest.mark.parametrize("call, error, message", [
    (lambda: pull(np.ones((2, 3)) / 3, np.ones((3, 1))), ValueError, "W must be square"),
    (lambda: pull(np.eye(2), np.ones((3, 1))), ValueError, "W must have one column per row of V"),
    (lambda: pull([[0.5, 0.6], [0.5, 0.5]], np.ones((2, 1))), ValueError, "row 0 sums to"),
    (lambda: pull([[1.5, -0.5], [0.5, 0.5]], np.ones((2, 1))), ValueError, "non-negative"),
    (lambda: pull(np.eye(2), [[1.0], [np.nan]]), ValueError, "V must be finite"),
    (lambda: attention_exact([[1, 0]], [[1, 0, 0]], [[1]]), ValueError, "share the dimension d"),
    (lambda: attention_exact([[1, 0]], [[1, 0]], [[1], [2]]), ValueError, "same number of rows"),
    (lambda: attention_exact(sp.zeros(1, 0), sp.zeros(1, 0), [[1]]), ValueError, "d = 0"),
    (lambda: ulps_from_exact([[1.0, 2.0]], sp.Matrix([[1]])), ValueError, "shape"),
    (lambda: plot_pull(np.ones((3, 3)), np.ones((3, 3))), ValueError, r"shape \(n, 2\)"),
])
def test_attention_helpers_refuse_bad_input(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_pull_with_a_self_loop_only_row():
    s, C = pull([[1.0, 0.0], [0.5, 0.5]], [[2.0], [6.0]])
    np.testing.assert_array_equal(s, [0.0, 0.5])
    np.testing.assert_array_equal(C, [[2.0], [2.0]])


def test_convex_hull_2d_of_a_square_with_inner_points():
    pts = [[0, 0], [2, 0], [2, 2], [0, 2], [1, 1], [0.5, 1.5]]
    hull = convex_hull_2d(pts)
    assert sorted(map(tuple, hull)) == [(0, 0), (0, 2), (2, 0), (2, 2)]


def test_ulps_from_exact_counts_floats_between():
    exact = sp.Matrix([[sp.Rational(1, 3), -sp.Rational(2, 3)]])
    third = 1 / 3
    assert ulps_from_exact([[third, -2 / 3]], exact) == 0
    assert ulps_from_exact([[np.nextafter(np.nextafter(third, 1), 1), -2 / 3]], exact) == 2
    assert ulps_from_exact([[third, np.nextafter(-2 / 3, 0)]], exact) == 1


# --- What the page shows, recomputed independently --------------------------------------------------

def _page_draws():
    """The figure's inputs X (6, 3) and projections W_Q, W_K (3, 4), W_V (3, 2), from the glued seed."""
    seed = int(bt.glued_float(PAGE, "pull_seed"))
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((6, 3)) * bt.glued_float(PAGE, "pull_scale")  # the page's inputs
    scale = 1 / np.sqrt(3)
    W_Q, W_K, W_V = (rng.standard_normal((3, 4)) * scale, rng.standard_normal((3, 4)) * scale,
                     rng.standard_normal((3, 2)) * scale)
    return X, W_Q, W_K, W_V


def _page_example():
    X, W_Q, W_K, W_V = _page_draws()
    return _layer(X @ W_Q, X @ W_K, X @ W_V) + (X @ W_V,)


@pytest.mark.build
def test_the_tables_print_the_figures_draws():
    """The box under the figure: the inputs row by row, then W_Q, W_K, W_V stacked, to three decimals."""
    X, W_Q, W_K, W_V = _page_draws()
    bt.assert_table_shows(bt.glued_table(PAGE, "tab-pull-inputs"), {str(i + 1): x for i, x in enumerate(X)})
    expected = {f"$W_{name}$, row {r + 1}": M[r] for name, M in zip("QKV", (W_Q, W_K, W_V)) for r in range(3)}
    bt.assert_table_shows(bt.glued_table(PAGE, "tab-pull-projections"), expected)


@pytest.mark.build
def test_glued_pull_numbers():
    Y, W, V = _page_example()
    s = 1 - np.diag(W)
    moved = np.linalg.norm(Y - V, axis=1)
    assert bt.glued_float(PAGE, "pull_n") == 6
    assert bt.glued_float(PAGE, "pull_min_weight") == pytest.approx(W.min(), rel=1e-9)
    assert bt.glued_float(PAGE, "pull_least") == np.argmin(s) + 1
    assert bt.glued_float(PAGE, "pull_least_s") == pytest.approx(s.min(), rel=1e-9)
    assert bt.glued_float(PAGE, "pull_least_moved") == pytest.approx(moved[np.argmin(s)], rel=1e-9)
    assert bt.glued_float(PAGE, "pull_most") == np.argmax(moved) + 1
    assert bt.glued_float(PAGE, "pull_most_moved") == pytest.approx(moved.max(), rel=1e-9)
    assert bt.glued_float(PAGE, "pull_most_s") == pytest.approx(s[np.argmax(moved)], rel=1e-9)


@pytest.mark.build
def test_prose_claims_of_the_pull_example():
    """The page: every value contributes to every output, and every output lies in the hull."""
    Y, W, V = _page_example()
    assert W.min() > 0
    for y in Y:
        res = scipy.optimize.linprog(np.zeros(6), A_eq=np.vstack([V.T, np.ones((1, 6))]),
                                     b_eq=np.append(y, 1.0), bounds=(0, None))
        assert res.status == 0
    # The element that keeps most attention for itself has the farthest centre of mass, yet it moves
    # less than another element, and the least of all.
    s = 1 - np.diag(W)
    off = W - np.diag(np.diag(W))
    dist = np.linalg.norm(off @ V / s[:, None] - V, axis=1)
    moved = np.linalg.norm(Y - V, axis=1)
    assert np.argmin(s) == np.argmax(dist) != np.argmax(moved)
    assert s.min() < 0.5  # "keeps most of its attention for itself": W_ii > 1/2
    assert np.argmin(moved) == np.argmin(s)
    assert bt.glued_float(PAGE, "pull_least_dist") == pytest.approx(dist.max(), rel=1e-9)


@pytest.mark.build
def test_glued_exact_agreement_with_mpmath():
    """Exact values by mpmath (50 digits), rounded to doubles; the package is within the glued ulps."""
    Q = [[1, 0], [0, 2]]
    K = [[2, 1], [0, -1], [1, 1]]
    V = [[0, 0], [4, 0], [0, 4]]
    mpmath.mp.dps = 50
    Wm = [[mpmath.exp(sum(q[c] * k[c] for c in range(2)) / mpmath.sqrt(2)) for k in K] for q in Q]
    Wm = [[w / sum(row) for w in row] for row in Wm]
    Ym = [[sum(row[j] * V[j][c] for j in range(3)) for c in range(2)] for row in Wm]
    Y, W = attention(Q, K, V)

    def ulps(a, exact):
        near = np.array([[float(x) for x in r] for r in exact])
        steps = 0
        for x, target in zip(np.ravel(a), np.ravel(near)):
            k = 0
            while x != target and k < 1000:
                x = np.nextafter(x, target)
                k += 1
            steps = max(steps, k)
        return steps

    assert bt.glued_float(PAGE, "exact_ulps_W") == ulps(W, Wm)
    assert bt.glued_float(PAGE, "exact_ulps_Y") == ulps(Y, Ym)
    assert ulps(W, Wm) <= 4 and ulps(Y, Ym) <= 16  # "the last bits that double precision has"


@pytest.mark.build
def test_exercise_1_orthogonal_queries_give_the_mean():
    V1 = np.array([[1.0, 2.0], [3.0, 0.0], [5.0, 4.0]])
    mean = V1.mean(axis=0)
    assert bt.glued_float(PAGE, "ex1_y_first") == pytest.approx(mean[0], rel=1e-15)
    assert bt.glued_float(PAGE, "ex1_y_second") == pytest.approx(mean[1], rel=1e-15)
    assert bt.glued_plain(PAGE, "ex1_rows_equal") == "True"


@pytest.mark.build
def test_exercise_2_affine_values():
    assert bt.glued_float(PAGE, "ex2_gap") < 1e-12
    Y, W, V = _page_example()
    a, b = 2.0, np.array([1.0, -1.0])
    assert np.allclose(W @ (a * V + b), a * Y + b, rtol=1e-12, atol=1e-12)


@pytest.mark.build
def test_exercise_3_causal_mask():
    assert bt.glued_float(PAGE, "ex3_first_gap") == 0.0
    assert bt.glued_float(PAGE, "ex3_masked_max") == 0.0


# --- A float bias added to the scores (PyTorch's float attn_mask) ---------------------------------

def test_bias_matches_the_float_attn_mask_oracle():
    import oracles

    rng = np.random.default_rng(28)
    for n_q, n_k in [(1, 1), (3, 5), (6, 6)]:
        Q, K, V = rng.standard_normal((n_q, 4)), rng.standard_normal((n_k, 4)), rng.standard_normal((n_k, 2))
        B = rng.standard_normal((n_q, n_k)) * 3
        B[:, 1:][rng.random((n_q, n_k - 1)) < 0.3] = -np.inf  # some masked entries, never column 0
        Y, W = attention(Q, K, V, bias=B)
        Y_o, W_o = oracles.biased_attention(Q, K, V, B)
        np.testing.assert_allclose(W, W_o, rtol=0, atol=1e-14)
        np.testing.assert_allclose(Y, Y_o, rtol=0, atol=1e-14)
        assert (W[np.isneginf(B)] == 0).all()


def test_bias_of_zeros_changes_nothing_and_minus_inf_is_the_mask():
    rng = np.random.default_rng(29)
    Q, K, V = (rng.standard_normal((5, 3)) for _ in range(3))
    M = np.tril(np.ones((5, 5), dtype=bool))
    np.testing.assert_array_equal(attention(Q, K, V, bias=np.zeros((5, 5)))[1], attention(Q, K, V)[1])
    np.testing.assert_array_equal(attention(Q, K, V, bias=np.where(M, 0.0, -np.inf))[1],
                                  attention(Q, K, V, mask=M)[1])
    # a constant per row is absorbed by the softmax
    shift = rng.standard_normal((5, 1)) * np.ones((1, 5))
    np.testing.assert_allclose(attention(Q, K, V, bias=shift)[1], attention(Q, K, V)[1], rtol=0, atol=1e-15)
    # bias and mask together: the allowed keys are those of both
    B = np.where(np.eye(5, k=-1) > 0, -np.inf, 0.0)
    W = attention(Q, K, V, mask=M, bias=B)[1]
    assert (W[~M] == 0).all() and (W[np.eye(5, k=-1) > 0] == 0).all()


# --- Broken variants ------------------------------------------------------------------------------


def _uniform_layer(Q, K, V, mask=None):
    """A layer that forgets the scores: every query attends uniformly."""
    V = np.asarray(V, float)
    W = np.full((len(Q), len(V)), 1 / len(V))
    return W @ V, W


# label: (module, name, wrong value, what is broken); gathered by tests/test_can_fail.py
BROKEN = {
    # attention
    "eq-weighted-sum": (att, "weighted_sum", lambda W, V: np.asarray(W) @ np.asarray(V) + 1e-9,
                        "the weighted sum is off by 1e-9"),
    "eq-attention": (att, "attention", _uniform_layer, "the layer ignores the scores"),
    "thm-convex-combination": (att, "attention", lambda Q, K, V, mask=None: (
        2.0 * (np.asarray(V, float) + 1.0), _uniform_layer(Q, K, V)[1]), "outputs outside the hull"),
    "thm-pull-toward-centre": (att, "pull", lambda W, V: (np.zeros(len(V)), np.asarray(V, float)),
                               "no pull"),
    "thm-key-value-permutation": (att, "attention", lambda Q, K, V, mask=None: (
        np.asarray(V, float)[: len(Q)], _uniform_layer(Q, K, V)[1]), "outputs follow the key order"),
}


# --- Bad inputs --------------------------------------------------------------------------------

# (function name, call, error type, message fragment); gathered by tests/test_validation.py
BAD = [
    ("weighted_sum", lambda: ag.weighted_sum(np.ones((3, 4)), ok), ValueError, "W must have one column per row of V"),
    ("weighted_sum", lambda: ag.weighted_sum(np.ones((3, 3)), inf), ValueError, "V must be finite"),
    ("attention", lambda: ag.attention(ok, ok, np.ones((4, 2))),
     ValueError, "K and V must have the same number of rows"),
    ("attention", lambda: ag.attention(ok, ok, nan), ValueError, "V must be finite"),
    ("attention", lambda: ag.attention(ok, ok, ok, empty_row), ValueError, "mask allows no key"),
    ("attention", lambda: ag.attention(ok, ok, cplx), TypeError, "V must hold real numbers"),
    ("pull", lambda: ag.pull(np.ones((3, 2)) / 2, ok), ValueError, "W must be square"),
    ("pull", lambda: ag.pull(np.ones((3, 3)), ok), ValueError, "every row of W must sum to 1"),
    ("attention_exact", lambda: ag.attention_exact([[1, 0]], [[1, 0, 0]], [[1]]), ValueError, "share the dimension d"),
    ("attention_exact", lambda: ag.attention_exact([[1, 0]], [[1, 0]], [[1], [2]]), ValueError, "same number of rows"),
    ("AttentionGraph", lambda: ag.AttentionGraph(np.ones((2, 3)), ["a", "b"]), ValueError, "W must be square"),
    ("AttentionGraph", lambda: ag.AttentionGraph(np.ones((2, 2)), ["a"]), ValueError, "labels must name the 2 nodes"),
    ("AttentionGraph", lambda: ag.AttentionGraph(-np.ones((2, 2)), ["a", "b"]), ValueError, "non-negative"),
    ("AttentionGraph", lambda: ag.AttentionGraph(np.full((2, 2), np.nan), ["a", "b"]), ValueError, "W must be finite"),
    # Sequences as graphs: the bias of attention, positions, linear attention, decoding
    ("attention", lambda: ag.attention(ok, ok, ok, bias=np.ones((3, 2))),
     ValueError, r"bias must have shape \(3, 3\) \(n_q, n_k\)"),
    ("attention", lambda: ag.attention(ok, ok, ok, bias=all_true),
     TypeError, "bias must be a float array.*Pass a boolean mask as mask="),
    ("attention", lambda: ag.attention(ok, ok, ok, bias=np.full((3, 3), np.nan)),
     ValueError, r"bias must be finite or -inf \(a masked entry\); found nan"),
    ("attention", lambda: ag.attention(ok, ok, ok, bias=np.full((3, 3), np.inf)),
     ValueError, "bias must be finite or -inf.*found inf"),
    ("attention", lambda: ag.attention(ok, ok, ok, bias=np.where(empty_row, 0.0, -np.inf)),
     ValueError, r"bias is -inf in every entry of row\(s\) \[1\]"),
    ("attention", lambda: ag.attention(ok, ok, ok, mask=empty_row, bias=np.zeros((3, 3))),
     ValueError, "mask allows no key"),
    ("attention", lambda: ag.attention(ok, ok, ok, mask=~np.eye(3, dtype=bool),
                                       bias=np.where(np.eye(3) > 0, 0.0, -np.inf)),
     ValueError, r"S allows no key in row\(s\) \[0, 1, 2\]: every entry is -inf or masked by mask"),
    ("attention", lambda: ag.attention(ok * 7e307, ok, ok, bias=np.full((3, 3), 1.7e308)),
     ValueError, r"the scores plus bias overflowed float64 at index \(0, 0\)"),
    ("attention", lambda: ag.attention(ok, ok, ok, bias=np.ones((3, 3), dtype=complex)),
     TypeError, "bias must hold real numbers"),
]
