"""Queries, keys and values: project(), its errors, the shared-projection theorem, and what the page shows."""

import importlib

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import attention_graph as ag
import booktools as bt
import oracles
from attention_graph import project
from attention_graph.qkv import identity_projections, random_projections, rotation
from bad_inputs import nan, ok
from strategies import MANY, assert_close, matrices

qkv_module = importlib.import_module("attention_graph.qkv")
PAGE = "qkv"
X4 = oracles.X_WORKED  # the worked example's four people


def test_project_is_three_matrix_products():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((5, 4))  # (n, d_model)
    W_Q, W_K, W_V = rng.standard_normal((4, 3)), rng.standard_normal((4, 3)), rng.standard_normal((4, 2))
    Q, K, V = project(X, W_Q, W_K, W_V)
    for got, W in ((Q, W_Q), (K, W_K), (V, W_V)):
        expected = [[sum(X[i, m] * W[m, c] for m in range(4)) for c in range(W.shape[1])] for i in range(5)]
        np.testing.assert_allclose(got, expected, rtol=1e-13)
    assert (Q.shape, K.shape, V.shape) == ((5, 3), (5, 3), (5, 2))


def test_row_i_depends_on_element_i_alone():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((4, 3))  # (n, d_model)
    Ws = [rng.standard_normal((3, 2)) for _ in range(3)]
    before = project(X, *Ws)
    X2 = X.copy()
    X2[2] += 10.0  # change element 2 only
    after = project(X2, *Ws)
    for b, a in zip(before, after):
        np.testing.assert_array_equal(np.delete(b, 2, axis=0), np.delete(a, 2, axis=0))
        assert not np.allclose(b[2], a[2])


@pytest.mark.parametrize("args, error, message", [
    ((np.ones((3, 2)), np.ones((3, 2)), np.ones((2, 2)), np.ones((2, 2))), ValueError,
     "W_Q must have one row per column of X"),
    ((np.ones((3, 2)), np.ones((2, 2)), np.ones((2, 3)), np.ones((2, 2))), ValueError,
     "W_Q and W_K must have the same number of columns"),
    ((np.ones((3, 2)), np.ones((2, 2)), np.ones((2, 2)), np.ones((4, 2))), ValueError,
     "W_V must have one row per column of X"),
    ((np.ones(3), np.ones((2, 2)), np.ones((2, 2)), np.ones((2, 2))), ValueError, "X must be a 2-d array"),
    ((np.ones((3, 2)), np.full((2, 2), np.nan), np.ones((2, 2)), np.ones((2, 2))), ValueError,
     "W_Q must be finite"),
    ((np.ones((3, 2)), np.ones((2, 2)), np.ones((2, 2)), np.ones((2, 2), dtype=complex)), TypeError,
     "W_V must hold real numbers"),
    ((np.full((3, 2), 1e200), np.full((2, 2), 1e200), np.ones((2, 2)), np.ones((2, 2))), ValueError,
     "Q = X W_Q overflowed"),
])
def test_project_refuses_bad_input(args, error, message):
    with pytest.raises(error, match=message):
        project(*args)


def test_helpers_refuse_bad_input():
    with pytest.raises(ValueError, match="d_model must be a positive integer"):
        identity_projections(0)
    with pytest.raises(TypeError, match="d_model must be a positive integer"):
        identity_projections(2.0)
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        random_projections(2, 2, 2, rng=1)
    with pytest.raises(ValueError, match="d_v must be a positive integer"):
        random_projections(2, 2, 0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="theta must be finite"):
        rotation(np.inf)


def test_identity_projections_give_q_k_v_equal_to_x():
    Q, K, V = project(X4, *identity_projections(2))
    for M in (Q, K, V):
        np.testing.assert_array_equal(M, X4)


def test_rotation_is_orthogonal():
    R = rotation(0.3)
    np.testing.assert_allclose(R @ R.T, np.eye(2), atol=1e-15)
    assert np.linalg.det(R) == pytest.approx(1.0)


def test_random_projections_are_seeded_with_variance_one_over_d_model():
    a = random_projections(64, 32, 16, np.random.default_rng(5))
    b = random_projections(64, 32, 16, np.random.default_rng(5))
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    assert np.concatenate([W.ravel() for W in a]).var() == pytest.approx(1 / 64, rel=0.1)


# --- The theorem: shared projections give symmetric scores -----------------------------------------

@MANY
@given(st.data())
def test_thm_symmetric_scores(data):
    n, d_model, d = data.draw(st.integers(1, 6)), data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4))
    X = data.draw(matrices(shape=(n, d_model), log10_scale=(-2, 1)))
    W, W_K = (data.draw(matrices(shape=(d_model, d), log10_scale=(-2, 1))) for _ in range(2))
    d = W.shape[1]
    # Shared projection W_Q = W_K = W: S is symmetric (plain numpy, not the package's scores).
    Q, K, _ = project(X, W, W, W)
    S = Q @ K.T / np.sqrt(d)
    assert_close(S, S.T, rtol=1e-12, atol=1e-9)
    # General W_K: S − Sᵀ = X (M − Mᵀ) Xᵀ / √d with M = W_Q W_Kᵀ.
    Q, K, _ = project(X, W, W_K, W)
    S = Q @ K.T / np.sqrt(d)
    M = W @ W_K.T
    scale = 1 + np.abs(X).max() ** 2 * np.abs(M).max() * M.shape[0] ** 2
    assert_close(S - S.T, X @ (M - M.T) @ X.T / np.sqrt(d), rtol=0, atol=1e-12 * scale)


def test_thm_symmetric_scores_weights_are_not_symmetric_in_general():
    """The page's remark: S symmetric does not make W symmetric (rows have different sums)."""
    S = X4 @ X4.T / np.sqrt(2)
    W = oracles.softmax(S)
    assert np.array_equal(S, S.T) and not np.allclose(W, W.T)


# --- What the page shows, recomputed independently --------------------------------------------------

def _page_projections(seed, d_model=2, d=3, d_v=2):
    rng = np.random.default_rng(seed)
    scale = 1 / np.sqrt(d_model)
    return (rng.standard_normal((d_model, d)) * scale, rng.standard_normal((d_model, d)) * scale,
            rng.standard_normal((d_model, d_v)) * scale)


_layer = oracles.attention


@pytest.mark.build
def test_glued_shapes():
    assert [bt.glued_float(PAGE, k) for k in ("qkv_n", "qkv_dmodel", "qkv_d", "qkv_dv")] == [4, 2, 3, 2]


@pytest.mark.build
def test_value_projection_changes_outputs_not_weights():
    seed = int(bt.glued_float(PAGE, "qkv_seed"))
    W_Q, W_K, W_V = _page_projections(seed)
    _, _, W_V2 = _page_projections(seed + 1)
    Y1, W1 = _layer(X4 @ W_Q, X4 @ W_K, X4 @ W_V)
    Y2, W2 = _layer(X4 @ W_Q, X4 @ W_K, X4 @ W_V2)
    assert bt.glued_float(PAGE, "qkv_wv_weight_change") == 0.0
    assert bt.glued_float(PAGE, "qkv_wv_output_change") == pytest.approx(np.abs(Y1 - Y2).max(), rel=1e-12)
    assert bt.glued_float(PAGE, "qkv_wv_output_change") > 0.1


@pytest.mark.build
def test_the_table_prints_the_drawn_projections():
    """The table under the sizes: W_Q, W_K, W_V of seed qkv_seed, row by row, to three decimals."""
    W_Q, W_K, W_V = _page_projections(int(bt.glued_float(PAGE, "qkv_seed")))
    expected = {f"$W_{name}$, row {r + 1}": M[r] for name, M in zip("QKV", (W_Q, W_K, W_V)) for r in range(2)}
    bt.assert_table_shows(bt.glued_table(PAGE, "tab-qkv-projections"), expected)


@pytest.mark.build
def test_identity_case_scores_symmetric_weights_not():
    _, W = _layer(X4, X4, X4)
    assert bt.glued_float(PAGE, "qkv_id_score_asym") == 0.0
    assert bt.glued_float(PAGE, "qkv_id_weight_asym") == pytest.approx(np.abs(W - W.T).max(), rel=1e-12)
    assert bt.glued_float(PAGE, "qkv_id_weight_asym") > 0.05


@pytest.mark.build
def test_exercise_1_shapes():
    expected = {"Q": (4, 3), "K": (4, 3), "V": (4, 5), "W": (4, 4), "Y": (4, 5)}
    for name, (rows, cols) in expected.items():
        assert bt.glued_float(PAGE, f"ex1_{name}_rows") == rows
        assert bt.glued_float(PAGE, f"ex1_{name}_cols") == cols


@pytest.mark.build
def test_exercise_2_rotation_leaves_scores_unchanged():
    theta = bt.glued_float(PAGE, "ex2_theta")
    R = np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])
    S_rot = (X4 @ R) @ (X4 @ R).T / np.sqrt(2)
    assert np.abs(S_rot - X4 @ X4.T / np.sqrt(2)).max() < 1e-12
    assert bt.glued_float(PAGE, "ex2_rot_change") < 1e-12


@pytest.mark.build
def test_exercise_3_symmetry_depends_on_the_product():
    swap, shift = np.array([[0.0, 1.0], [1.0, 0.0]]), np.array([[0.0, 1.0], [0.0, 0.0]])
    S_shift = X4 @ (X4 @ shift).T / np.sqrt(2)
    assert bt.glued_float(PAGE, "ex3_swap_asym") == 0.0
    assert np.array_equal(swap, swap.T)
    assert bt.glued_float(PAGE, "ex3_shift_asym") == pytest.approx(np.abs(S_shift - S_shift.T).max(), rel=1e-12)
    assert bt.glued_float(PAGE, "ex3_shift_asym") > 0


@pytest.mark.build
def test_the_qkv_figure_prints_the_query_meeting_every_key():
    """fig-qkv: Ana's three vectors and her scores against every key, the numbers of the projections."""
    from attention_graph.plots import plot_qkv
    from attention_graph.worked_example import PEOPLE

    W_Q, W_K, W_V = random_projections(2, 3, 2, np.random.default_rng(int(bt.glued_float(PAGE, "qkv_seed"))))
    ana = PEOPLE.index("Ana")
    fig = plot_qkv(X4, W_Q, W_K, W_V, PEOPLE, ana)
    shown = {t.get_text() for ax in fig.axes for t in ax.texts}
    scores = oracles.scaled_scores(X4 @ W_Q, X4 @ W_K)[ana]
    for value in list(scores) + list((X4 @ W_Q)[ana]) + list((X4 @ W_V)[ana]):
        assert f"{value:.2f}".replace("-", "−") in shown
    assert "image/svg+xml" in bt.glue_data(PAGE)["fig-qkv"]["data"]


# --- Broken variants ------------------------------------------------------------------------------

qk = importlib.import_module("attention_graph.qkv")


# label: (module, name, wrong value, what is broken); gathered by tests/test_can_fail.py
BROKEN = {
    # qkv
    "eq-qkv": (qk, "project", lambda X, W_Q, W_K, W_V: tuple(
        np.asarray(X, float) @ np.asarray(W, float) + 1e-9 for W in (W_Q, W_K, W_V)), "products off by 1e-9"),
    "eq-identity-projections": (qk, "project", lambda X, W_Q, W_K, W_V: (np.asarray(X, float) * 2,) * 3,
                                "the projections double X"),
    "thm-symmetric-scores": (qk, "project", lambda X, W_Q, W_K, W_V: (
        np.asarray(X, float) @ np.asarray(W_Q, float),
        np.asarray(X, float) @ np.asarray(W_K, float) @ np.array([[1.0, 1.0], [0.0, 1.0]]),
        np.asarray(X, float) @ np.asarray(W_V, float)), "K sheared: W_Q = W_K is not shared"),
}


# --- Bad inputs --------------------------------------------------------------------------------

# (function name, call, error type, message fragment); gathered by tests/test_validation.py
BAD = [
    ("project", lambda: ag.project(ok, np.ones((3, 2)), np.ones((2, 2)), np.ones((2, 2))),
     ValueError, "W_Q must have one row per column of X"),
    ("project", lambda: ag.project(ok, np.ones((2, 2)), np.ones((2, 3)), np.ones((2, 2))),
     ValueError, "W_Q and W_K must have the same number of columns"),
    ("project", lambda: ag.project(nan, np.ones((2, 2)), np.ones((2, 2)), np.ones((2, 2))),
     ValueError, "X must be finite"),
]
