"""Softmax, row by row: the spine's guarantees (the chapter's theorems add their own tests)."""

import ast
import importlib
import warnings

import numpy as np
import pytest
import scipy.special
from hypothesis import given
from hypothesis import strategies as st

import attention_graph as ag
import booktools as bt
import oracles
from attention_graph import hardmax, registry, softmax, softmax_jacobian, softmax_with_temperature
from attention_graph.softmax import exp_overflow_point, naive_breaking_points, naive_softmax, peakedness
from bad_inputs import cplx, empty_row, nan, ok
from strategies import EDGE, MANY, assert_close, assert_equal, edge_matrices, masks, matrices


def test_rows_are_probability_distributions():
    S = np.random.default_rng(1).standard_normal((4, 6)) * 10  # (n_q, n_k)
    W = softmax(S)  # (n_q, n_k)
    assert (W > 0).all()
    np.testing.assert_allclose(W.sum(axis=1), 1.0, rtol=0, atol=1e-15)


def test_masked_entries_are_exactly_zero():
    S = np.arange(6.0).reshape(2, 3)  # (n_q, n_k)
    mask = np.array([[True, False, True], [False, False, True]])
    W = softmax(S, mask)  # (n_q, n_k)
    assert (W[~mask] == 0.0).all()
    np.testing.assert_allclose(W[0, [0, 2]], np.exp([0, 2]) / np.exp([0, 2]).sum())
    assert W[1, 2] == 1.0


def test_huge_scores_give_finite_correct_weights():
    S = np.array([[1e300, -1e300, 1e300], [-1e300, -1e300, -1e300]])
    W = softmax(S)
    np.testing.assert_array_equal(W, [[0.5, 0.0, 0.5], [1 / 3, 1 / 3, 1 / 3]])


@pytest.mark.parametrize("S, mask, error, message", [
    (np.ones((2, 2)), np.array([[True, True], [False, False]]), ValueError, r"row\(s\) \[1\]"),
    (np.ones((2, 2)), np.ones((2, 2), dtype=int), TypeError, "mask must be a boolean"),
    (np.ones((2, 2)), np.ones((2, 3), dtype=bool), ValueError, "mask must have shape"),
    (np.array([[np.nan, 0.0]]), None, ValueError, "S must be finite"),
    (np.ones((2, 0)), None, ValueError, "no columns"),
])
def test_softmax_refuses_bad_input(S, mask, error, message):
    with pytest.raises(error, match=message):
        softmax(S, mask)


# ==================================================================================================
# The chapter's theorems, each tested under its label, property-based over thousands of cases.
# ==================================================================================================
sm = importlib.import_module("attention_graph.softmax")
PAGE = "softmax"


def _assert_rows_are_distributions(S, W):
    n_k = S.shape[1]
    assert W.shape == S.shape and np.isfinite(W).all()
    assert (W >= 0).all()
    assert_close(W.sum(axis=1), 1.0, rtol=0, atol=2 * n_k * np.finfo(float).eps)
    # Positive wherever exp(S_ij − m_i) does not underflow in float64.
    with np.errstate(over="ignore"):
        safe = (S - S.max(axis=1, keepdims=True)) > -700
    assert (W[safe] > 0).all()
    assert (W.max(axis=1) >= 1 / n_k - 1e-15).all()


@MANY
@given(matrices(log10_scale=(-3, 300)))
def test_thm_rows_sum_to_one(S):
    _assert_rows_are_distributions(S, softmax(S))


@EDGE
@given(edge_matrices())
def test_thm_rows_sum_to_one_at_the_edges(S):
    _assert_rows_are_distributions(S, softmax(S))


@MANY
@given(st.data())
def test_masked_entries_are_exactly_zero_property(data):
    S = data.draw(matrices())
    mask = data.draw(masks(S.shape))
    W = softmax(S, mask)
    assert (W[~mask] == 0.0).all()
    assert_close(W.sum(axis=1), 1.0, rtol=0, atol=2 * S.shape[1] * np.finfo(float).eps)
    # The allowed entries are the softmax of the allowed scores alone (scipy, independently).
    assert_close(W, oracles.softmax(S, mask), rtol=1e-12, atol=1e-300)


@MANY
@given(matrices(), st.data())
def test_thm_shift_invariance(S, data):
    c = data.draw(matrices(shape=(S.shape[0], 1), log10_scale=(-3, 3)))
    assert_close(softmax(S + c), softmax(S), rtol=1e-10, atol=1e-300)
    assert_close(softmax(S), scipy.special.softmax(S, axis=1), rtol=1e-12, atol=1e-300)


def test_thm_shift_invariance_makes_huge_scores_safe():
    """What the theorem licenses: the max-subtracted softmax is exact where the literal one fails."""
    S = np.array([[1000.0, 999.0, 0.0]])
    assert np.isnan(naive_softmax(S)).any()
    e = np.exp(np.array([0.0, -1.0, -1000.0]))
    assert_close(softmax(S)[0], e / e.sum(), rtol=1e-15)


@MANY
@given(matrices(log10_scale=(0, 0)))
def test_thm_temperature_limits(S):
    S = np.round(S * 2)  # integer scores: ties are common, and every gap is at least 1
    top = S == S.max(axis=1, keepdims=True)
    expected = top / top.sum(axis=1, keepdims=True)
    assert_equal(hardmax(S), expected)
    # exp(−1/τ) is exactly 0 in float64 for τ = 1e-3: the cold limit is reached exactly.
    assert_equal(softmax_with_temperature(S, 1e-3), expected)
    assert_equal(softmax_with_temperature(S, np.inf), np.full(S.shape, 1 / S.shape[1]))
    assert_close(softmax_with_temperature(S, 1e9), 1 / S.shape[1], rtol=1e-7)


@MANY
@given(matrices(log10_scale=(-2, 1)), st.floats(0.01, 100.0))
def test_temperature_is_softmax_of_scaled_scores(S, tau):
    assert_close(softmax_with_temperature(S, tau), scipy.special.softmax(S / tau, axis=1),
                               rtol=1e-9, atol=1e-300)


def test_temperature_one_is_softmax_bit_for_bit():
    S = np.random.default_rng(11).standard_normal((4, 6)) * 20
    assert_equal(softmax_with_temperature(S, 1.0), softmax(S))


@MANY
@given(matrices(rows=(1, 1), cols=(2, 6), log10_scale=(-1, 1)))
def test_thm_softmax_jacobian(S):
    s = S[0]
    p = scipy.special.softmax(s)
    J = softmax_jacobian(p)
    # Central finite differences of scipy's softmax, column by column (independent of the formula).
    h = 1e-6
    I = np.eye(len(s))
    up, down = scipy.special.softmax(s + h * I, axis=1), scipy.special.softmax(s - h * I, axis=1)
    fd = ((up - down) / (2 * h)).T  # column j: the derivative of p along s_j
    assert_close(J, fd, rtol=0, atol=1e-8)
    assert_close(J.sum(axis=1), 0.0, atol=1e-15)
    assert_equal(J, J.T)


def test_one_hot_row_has_zero_jacobian():
    assert_equal(softmax_jacobian([0.0, 1.0, 0.0]), np.zeros((3, 3)))


@pytest.mark.parametrize("call, error, message", [
    (lambda: softmax_with_temperature([[1.0]], 0.0), ValueError, "tau must be > 0"),
    (lambda: softmax_with_temperature([[1.0]], -1.0), ValueError, "tau must be > 0"),
    (lambda: softmax_with_temperature([[1.0]], np.nan), ValueError, "tau must be > 0"),
    (lambda: softmax_with_temperature([[1.0]], "hot"), TypeError, "tau must be a real number"),
    (lambda: softmax_with_temperature([[1.0, 2.0]], 1.0, [[False, False]]), ValueError, "mask allows no key"),
    (lambda: hardmax(np.ones((2, 0))), ValueError, "no columns"),
    (lambda: hardmax([[np.inf]]), ValueError, "S must be finite"),
    (lambda: softmax_jacobian([[0.5, 0.5]]), ValueError, "p must be one row"),
    (lambda: softmax_jacobian([0.5, 0.6]), ValueError, "p must sum to 1"),
    (lambda: softmax_jacobian([1.5, -0.5]), ValueError, "p must be non-negative"),
    (lambda: softmax_jacobian([]), ValueError, "p is empty"),
    (lambda: naive_breaking_points(np.float16), TypeError, "float32 or float64"),
    (lambda: exp_overflow_point("float8"), ValueError, "fmt must be one of"),
    (lambda: peakedness([4], 16, 10, rng=0), TypeError, "rng must be"),
    (lambda: peakedness([4], 1, 10, np.random.default_rng(0)), ValueError, "n_k must be an integer >= 2"),
])
def test_softmax_helpers_refuse_bad_input(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_hardmax_and_temperature_respect_the_mask():
    S = np.array([[5.0, 1.0, 1.0]])
    mask = np.array([[False, True, True]])
    assert_equal(hardmax(S, mask), [[0.0, 0.5, 0.5]])
    assert_equal(softmax_with_temperature(S, np.inf, mask), [[0.0, 0.5, 0.5]])


def test_the_temperature_limits_check_fails_when_tau_is_ignored(monkeypatch):
    """A second broken variant of ``thm-temperature-limits`` (test_can_fail.py breaks ``hardmax``)."""
    monkeypatch.setattr(sm, "softmax_with_temperature", lambda S, tau, mask=None: sm.softmax(S))
    with pytest.raises(registry.DerivationError, match="thm-temperature-limits"):
        registry.verify("thm-temperature-limits")


# --- What the page shows, recomputed independently --------------------------------------------------

@pytest.mark.build
@pytest.mark.parametrize("dtype, suffix", [(np.float64, "64"), (np.float32, "32")])
def test_glued_overflow_point_is_where_exp_overflows(dtype, suffix):
    x = dtype(bt.glued_float(PAGE, "naive_over_" + suffix))
    with np.errstate(over="ignore"):
        assert np.isinf(np.exp(x)) and np.isfinite(np.exp(np.nextafter(x, dtype(0))))
    assert float(x) == pytest.approx(np.log(float(np.finfo(dtype).max)), abs=1e-4)


@pytest.mark.build
def test_glued_underflow_point_is_where_exp_underflows():
    x = bt.glued_float(PAGE, "naive_under_64")
    with np.errstate(under="ignore"):
        assert np.exp(x) == 0.0 and np.exp(np.nextafter(x, 0.0)) > 0.0
    assert bt.glued_plain(PAGE, "naive_big_nan") == "True"  # the page's demo row breaks the literal formula


def _independent_peakedness(seed, n_k, n_rows, dims):
    rng = np.random.default_rng(seed)
    out = []
    for d in dims:
        q = rng.standard_normal((n_rows, 1, d))
        k = rng.standard_normal((n_rows, n_k, d))
        raw = (q * k).sum(axis=2)
        row = []
        for S in (raw, raw / np.sqrt(d)):
            P = scipy.special.softmax(S, axis=1)
            s2, s3 = (P**2).sum(axis=1), (P**3).sum(axis=1)
            jac = np.sqrt(np.maximum(s2 - 2 * s3 + s2**2, 0))  # ‖diag(p) − ppᵀ‖_F in closed form
            row += [P.max(axis=1).mean(), jac.mean()]
        out.append(row)
    return np.array(out)  # (dims, 4): max_raw, jac_raw, max_scaled, jac_scaled


def _page_peakedness():
    """The page's simulation, recomputed from the seed, sizes and dimensions it glued."""
    seed, n_k, n_rows = (int(bt.glued_float(PAGE, k)) for k in ("pk_seed", "pk_nk", "pk_rows"))
    dims = ast.literal_eval(bt.glued_plain(PAGE, "pk_dims"))  # the dimensions the page simulates
    return n_k, dims, _independent_peakedness(seed, n_k, n_rows, dims)


@pytest.mark.build
def test_glued_peakedness_matches_an_independent_computation():
    n_k, dims, got = _page_peakedness()
    assert int(bt.glued_float(PAGE, "pk_dmax")) == max(dims) == dims[-1]
    for key, value in [("pk_max_raw", got[-1, 0]), ("pk_jac_raw", got[-1, 1]), ("pk_max_scaled", got[-1, 2]),
                       ("pk_jac_scaled", got[-1, 3]), ("pk_max_d1", got[0, 0]), ("pk_jac_d1", got[0, 1])]:
        assert bt.glued_float(PAGE, key) == pytest.approx(value, rel=1e-9), key
    assert bt.glued_float(PAGE, "pk_uniform") == 1 / n_k


@pytest.mark.build
def test_prose_claims_about_the_scale():
    """The page: unscaled rows sharpen toward one-hot and the Jacobian shrinks; scaled rows look alike."""
    n_k, _dims, got = _page_peakedness()
    max_raw, jac_raw, max_scaled, jac_scaled = got.T
    assert (np.diff(max_raw) > 0).all() and max_raw[-1] > 0.9
    assert jac_raw[-1] < jac_raw[0] / 3
    assert max_scaled.max() - max_scaled.min() < 0.1 and jac_scaled.max() - jac_scaled.min() < 0.05
    assert max_scaled[-1] > 2 / n_k  # not uniform either
    assert bt.glued_float(PAGE, "pk_max_raw") > bt.glued_float(PAGE, "pk_max_scaled")


@pytest.mark.build
def test_exercise_1_largest_weight_falls_with_temperature():
    s = np.array([1.0, 2.0, 3.0])
    tops = [bt.glued_float(PAGE, f"ex1_top_{k}") for k in ("half", "one", "two")]
    for top, tau in zip(tops, (0.5, 1.0, 2.0)):
        assert top == pytest.approx(scipy.special.softmax(s / tau).max(), rel=1e-13)
    assert tops[0] > tops[1] > tops[2] > 1 / 3


@pytest.mark.build
def test_exercise_2_single_precision_points():
    over, under = np.float32(bt.glued_float(PAGE, "ex2_over_32")), np.float32(bt.glued_float(PAGE, "ex2_under_32"))
    with np.errstate(over="ignore", under="ignore"):
        assert np.isinf(np.exp(over)) and np.isfinite(np.exp(np.nextafter(over, np.float32(0))))
        assert np.exp(under) == 0 and np.exp(np.nextafter(under, np.float32(0))) > 0


@pytest.mark.build
def test_exercise_3_uniform_jacobian():
    assert bt.glued_float(PAGE, "ex3_diag") == 1 / 4 - 1 / 16
    assert bt.glued_float(PAGE, "ex3_off") == -1 / 16
    assert bt.glued_float(PAGE, "ex3_eig_large") == pytest.approx(1 / 4, abs=1e-15)
    assert bt.glued_float(PAGE, "ex3_eig_small") < 1e-12


@pytest.mark.build
def test_glued_overflow_points_of_the_accelerator_formats():
    # ln of the largest finite number; for the NumPy types also the searched breaking point.
    for fmt, dtype in (("float16", np.float16), ("float32", np.float32)):
        largest = float(np.finfo(dtype).max)
        assert exp_overflow_point(fmt) == pytest.approx(np.log(largest), rel=1e-12)
        assert bt.glued_float(PAGE, f"exp_over_{fmt}") == pytest.approx(np.log(largest), rel=1e-12)
    # float32: the searched first failure of the literal formula is at that point
    assert abs(naive_breaking_points(np.float32)["overflow"] - exp_overflow_point("float32")) < 1e-4
    bf16_largest = float.fromhex("0x1.fep127")  # bfloat16: 8 bits of precision, float32's exponents
    assert bt.glued_float(PAGE, "exp_over_bfloat16") == pytest.approx(np.log(bf16_largest), rel=1e-12)
    # "bfloat16 overflows where float32 does, float16 far earlier"
    assert abs(bt.glued_float(PAGE, "exp_over_bfloat16") - bt.glued_float(PAGE, "exp_over_float32")) < 0.01
    assert bt.glued_float(PAGE, "exp_over_float16") < bt.glued_float(PAGE, "exp_over_float32") / 7


# --- −∞ in the scores is a masked entry (as PyTorch code writes masks) -------------------------------

def test_minus_infinity_in_the_scores_is_the_boolean_mask():
    """softmax(S with −∞ where M is False) = softmax over the allowed keys (thm-masked-softmax-neighbours)."""
    rng = np.random.default_rng(19)
    S = rng.normal(size=(5, 6)) * 3  # (5, 6)
    M = rng.random((5, 6)) < 0.6  # (5, 6)
    M[np.arange(5), rng.integers(0, 6, 5)] = True  # every row allows a key
    W = softmax(np.where(M, S, -np.inf))  # (5, 6)
    assert np.allclose(W, oracles.softmax(S, M), rtol=1e-12, atol=0)
    assert (W[~M] == 0).all()
    assert np.array_equal(W, softmax(S, mask=M))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_minus_infinity_keeps_the_float_type_and_gives_no_warning(dtype):
    S = np.array([[0.0, -np.inf, 1.0]], dtype=dtype)  # (1, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        W = softmax(S)  # (1, 3)
    assert W.dtype == dtype and W[0, 1] == 0 and np.isclose(W.sum(), 1)


def test_raw_score_row_is_one_query_against_its_keys():
    from attention_graph.softmax import raw_score_row

    row = raw_score_row(5, 7, np.random.default_rng(3))  # (7,)
    rng = np.random.default_rng(3)
    q, K = rng.standard_normal(5), rng.standard_normal((7, 5))  # (5,), (7, 5)
    assert row.shape == (7,) and np.allclose(row, [k @ q for k in K], rtol=0, atol=1e-12)


@pytest.mark.build
def test_the_page_glues_the_rows_of_the_softmax_explorable():
    import json
    import re

    from attention_graph.softmax import raw_score_row

    html = bt.glue_data("softmax")["explore-softmax"]["data"]["text/html"]
    state = json.loads(re.search(r"<script[^>]*>(.*)</script>", html, re.S).group(1))
    rng = np.random.default_rng(int(bt.glued_float("softmax", "row_seed")))
    n_k = int(bt.glued_float("softmax", "pk_nk"))
    assert state["d"] == int(bt.glued_float("softmax", "row_d"))
    for d, row in zip(state["dims"], state["rows"]):
        assert np.array_equal(row, raw_score_row(d, n_k, rng))


# --- Broken variants ------------------------------------------------------------------------------


# label: (module, name, wrong value, what is broken); gathered by tests/test_can_fail.py
BROKEN = {
    # softmax
    "eq-softmax": (sm, "softmax", lambda S, mask=None: np.exp(np.asarray(S, float)), "not normalised"),
    "eq-softmax-stable": (sm, "softmax", lambda S, mask=None: sm.naive_softmax(S), "no maximum subtracted"),
    "eq-softmax-temperature": (sm, "softmax_with_temperature", lambda S, tau, mask=None: sm.softmax(S),
                               "τ ignored"),
    "thm-rows-sum-to-one": (sm, "softmax", lambda S, mask=None: np.exp(np.asarray(S, float)) / 2,
                            "rows not normalised"),
    "thm-shift-invariance": (sm, "softmax", lambda S, mask=None: np.asarray(S, float) / np.asarray(S, float).sum(),
                             "a linear normalisation"),
    "thm-temperature-limits": (sm, "hardmax", lambda S, mask=None: sm.softmax(S), "softmax for hardmax"),
    "thm-softmax-jacobian": (sm, "softmax_jacobian", lambda p: np.diag(np.asarray(p, float)),
                             "the outer product forgotten"),
}


# --- Bad inputs --------------------------------------------------------------------------------

# (function name, call, error type, message fragment); gathered by tests/test_validation.py
BAD = [
    ("softmax", lambda: ag.softmax(ok[0]), ValueError, "S must be a 2-d array"),
    ("softmax", lambda: ag.softmax(nan), ValueError, "S must be finite"),
    ("softmax", lambda: ag.softmax(np.ones((3, 3)), empty_row), ValueError, r"mask allows no key in row\(s\) \[1\]"),
    ("softmax", lambda: ag.softmax(np.ones((3, 3)), np.ones((3, 3))), TypeError, "mask must be a boolean array"),
    ("softmax", lambda: ag.softmax(np.ones((3, 3)), np.ones((3, 2), bool)),
     ValueError, r"mask must have shape \(3, 3\)"),
    ("softmax", lambda: ag.softmax(np.ones((2, 0))), ValueError, "no columns"),
    # −∞ is a masked entry (PyTorch's way); a row of −∞ only, +∞ and NaN are still refused.
    ("softmax", lambda: ag.softmax([[0.0, 1.0], [-np.inf, -np.inf]]), ValueError,
     r"S allows no key in row\(s\) \[1\]: every entry is -inf \(masked\)"),
    ("softmax", lambda: ag.softmax([[0.0, -np.inf]], mask=np.array([[False, True]])), ValueError,
     r"S allows no key in row\(s\) \[0\]: every entry is -inf or masked by mask"),
    ("softmax", lambda: ag.softmax([[0.0, np.inf]]), ValueError,
     r"S must be finite or -inf \(a masked entry\); found inf at index \(0, 1\)"),
    ("softmax", lambda: ag.softmax([[-np.inf, np.nan]]), ValueError, r"S must be finite or -inf .*found nan"),
    ("hardmax", lambda: ag.hardmax([[-np.inf, -np.inf]]), ValueError, r"S allows no key in row\(s\) \[0\]"),
    ("softmax_with_temperature", lambda: ag.softmax_with_temperature(ok, 0.0), ValueError, "tau must be > 0"),
    ("softmax_with_temperature", lambda: ag.softmax_with_temperature(nan, 1.0), ValueError, "S must be finite"),
    ("softmax_with_temperature", lambda: ag.softmax_with_temperature([[-np.inf]], float("inf")), ValueError,
     r"S allows no key in row\(s\) \[0\]"),
    ("hardmax", lambda: ag.hardmax(np.ones((3, 3)), empty_row), ValueError, "mask allows no key"),
    ("hardmax", lambda: ag.hardmax(cplx), TypeError, "S must hold real numbers"),
    ("softmax_jacobian", lambda: ag.softmax_jacobian([0.2, 0.2]), ValueError, "p must sum to 1"),
    ("softmax_jacobian", lambda: ag.softmax_jacobian(ok), ValueError, "p must be one row"),
]


# --- The box "Two common slips": the scale in the wrong place (worked example, Q = K = X) ----------

def _worked_X():
    return oracles.X_WORKED  # Carla, Ana, Bruno, Diego


def _rows(E):
    """Each row divided by its sum (the normalisation alone, for the misplaced scale)."""
    return E / E.sum(axis=1, keepdims=True)


@pytest.mark.build
def test_scale_outside_the_exponential_box():
    X = _worked_X()
    G = X @ X.T  # (4, 4), unscaled dot products
    right = oracles.softmax(G / np.sqrt(2))
    outside = _rows(np.exp(G) / np.sqrt(2))  # the factor cancels: this is the unscaled softmax
    np.testing.assert_allclose(outside, oracles.softmax(G), rtol=1e-14)
    assert bt.glued_float(PAGE, "w_ac_right") == pytest.approx(right[1, 0], rel=1e-12)
    assert bt.glued_float(PAGE, "w_ac_outside") == pytest.approx(outside[1, 0], rel=1e-12)
    assert bt.glued_float(PAGE, "max_diff_outside") == pytest.approx(abs(outside - right).max(), rel=1e-12)
    assert bt.glued_float(PAGE, "max_diff_outside") > 0.05  # "a different function"
    assert bt.glued_float(PAGE, "row_sum_after") == pytest.approx(1 / np.sqrt(2), rel=1e-12)
    # The table of the box: the right reading and the two slips, for Ana's row (index 1; Carla is 0).
    after = oracles.softmax(G) / np.sqrt(2)  # slip 2: the unscaled softmax, then divided by √d
    assert bt.glued_float(PAGE, "w_ac_after") == pytest.approx(after[1, 0], rel=1e-12)
    for reading, W in [("right", right), ("outside", outside), ("after", after)]:
        assert bt.glued_float(PAGE, f"ana_row_sum_{reading}") == pytest.approx(W[1].sum(), rel=1e-12)
    # "Both slips change the weight", and slip 2's is slip 1's divided by √d.
    w_right, w_out, w_after = (bt.glued_float(PAGE, f"w_ac_{r}") for r in ("right", "outside", "after"))
    assert abs(w_out - w_right) > 0.01 and abs(w_after - w_right) > 0.01
    assert w_after == pytest.approx(w_out / np.sqrt(2), rel=1e-12)
