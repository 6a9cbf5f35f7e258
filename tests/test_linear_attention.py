"""Linear attention: the feature maps, the linear form against the paper's quadratic loop
(tests/oracles.py), the causal running sum and the random features' unbiasedness."""

import importlib

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import attention_graph as ag
import booktools as bt
import oracles
from attention_graph import RandomFeatures, elu_feature_map, linear_attention, linear_weights, random_features, registry
from bad_inputs import inf, nan, ok

PAGE = "linear_attention"


# Independent implementations from the papers' formulas, used by this file only.

def linear_attention_loop(Q, K, V, phi, causal: bool = False) -> np.ndarray:
    """Katharopoulos et al. (2020), eq. 4 (and eq. 8 causally): V'_i = Σ_j φ(Q_i)ᵀφ(K_j) V_j / Σ_j φ(Q_i)ᵀφ(K_j),
    the sum over j <= i when causal, written as the quadratic double loop."""
    PQ, PK, V = np.asarray(phi(Q)), np.asarray(phi(K)), np.asarray(V, dtype=float)
    out = np.zeros((PQ.shape[0], V.shape[1]))
    for i in range(PQ.shape[0]):
        num, den = np.zeros(V.shape[1]), 0.0
        for j in range(PK.shape[0] if not causal else i + 1):
            sim = float(PQ[i] @ PK[j])
            num += sim * V[j]
            den += sim
        out[i] = num / den
    return out


def elu_plus_one(X) -> np.ndarray:
    """elu(x) + 1 with α = 1: x + 1 for x > 0, exp(x) for x <= 0."""
    X = np.asarray(X, dtype=float)
    return np.where(X > 0, X + 1, np.exp(np.minimum(X, 0)))


def test_elu_feature_map_is_elu_plus_one():
    X = np.linspace(-5, 5, 41)[:, None] * np.ones((1, 3))
    np.testing.assert_allclose(elu_feature_map(X), elu_plus_one(X), rtol=1e-15, atol=0)
    assert (elu_feature_map(X) > 0).all()


@settings(derandomize=True, max_examples=40)
@given(n_q=st.integers(1, 6), n_k=st.integers(1, 6), d=st.integers(1, 5), d_v=st.integers(1, 4),
       seed=st.integers(0, 2**32 - 1))
def test_linear_attention_is_the_papers_quadratic_loop(n_q, n_k, d, d_v, seed):
    rng = np.random.default_rng(seed)
    Q, K, V = rng.standard_normal((n_q, d)), rng.standard_normal((n_k, d)), rng.standard_normal((n_k, d_v))
    np.testing.assert_allclose(linear_attention(Q, K, V), linear_attention_loop(Q, K, V, elu_plus_one),
                               rtol=0, atol=1e-12)


def test_thm_linear_equals_quadratic():
    assert bt.verified("thm-linear-equals-quadratic") >= 1
    rng = np.random.default_rng(11)
    Q, K, V = rng.standard_normal((20, 4)), rng.standard_normal((30, 4)), rng.standard_normal((30, 3))
    phi = random_features(4, 5, rng)
    W = linear_weights(Q, K, phi)
    np.testing.assert_allclose(W.sum(axis=1), 1, rtol=0, atol=1e-14)
    assert np.linalg.matrix_rank(W) == 5  # the two-hop graph through F = 5 feature nodes
    np.testing.assert_allclose(linear_attention(Q, K, V, phi), W @ V, rtol=0, atol=1e-12)
    np.testing.assert_allclose(linear_attention(Q, K, V, phi), linear_attention_loop(Q, K, V, phi),
                               rtol=0, atol=1e-12)


def test_thm_causal_running_sum():
    assert bt.verified("thm-causal-running-sum") >= 1
    rng = np.random.default_rng(12)
    Q, K, V = rng.standard_normal((15, 3)), rng.standard_normal((15, 3)), rng.standard_normal((15, 2))
    got = linear_attention(Q, K, V, causal=True)
    np.testing.assert_allclose(got, linear_attention_loop(Q, K, V, elu_plus_one, causal=True),
                               rtol=0, atol=1e-12)
    for i in range(15):  # row i is linear attention over the first i + 1 tokens
        np.testing.assert_allclose(got[i], linear_attention(Q[i:i + 1], K[:i + 1], V[:i + 1])[0], rtol=0, atol=1e-12)


def test_thm_random_features_unbiased():
    assert bt.verified("thm-random-features-unbiased") >= 1
    # the class follows the check: exact Gaussian integrals at d = 1 and 2, the step to any d in words
    strength, scope = registry.strength("thm-random-features-unbiased")
    assert strength == "verified" and "d = 1 and d = 2" in scope
    # Monte Carlo: the mean of φ(q)·φ(k) over many independent feature draws is exp(q·k/√d).
    rng = np.random.default_rng(13)
    q, k = rng.standard_normal((1, 4)) * 0.5, rng.standard_normal((1, 4)) * 0.5
    phi = random_features(4, 200_000, np.random.default_rng(14))
    estimate = float((phi(q) @ phi(k).T)[0, 0])
    assert estimate == pytest.approx(np.exp(float((q @ k.T)[0, 0]) / 2.0), rel=0.01)


def test_random_features_are_seeded_and_positive():
    a = random_features(3, 7, np.random.default_rng(1))
    b = random_features(3, 7, np.random.default_rng(1))
    np.testing.assert_array_equal(a.Xi, b.Xi)
    assert a.F == 7 and (a(np.ones((2, 3))) > 0).all()
    assert isinstance(a, RandomFeatures) and not a.Xi.flags.writeable


def test_linear_attention_keeps_no_quadratic_matrix():
    """The linear form allocates O(n F d_v), not n²: at n = 4096 its peak is far under one n × n matrix."""
    import memtools

    peak = memtools.traced_peak(
        "import numpy as np\n"
        "from attention_graph import linear_attention\n"
        "rng = np.random.default_rng(0)\n"
        "Q, K, V = (rng.standard_normal((4096, 16)) for _ in range(3))\n",
        "linear_attention(Q, K, V)")
    assert peak < 4096**2 * 8 / 8


# --- What the page shows ------------------------------------------------------------------------------

@pytest.mark.build
def test_page_linear_numbers():
    assert bt.glued_float(PAGE, "lin_gap") < 1e-12
    assert bt.glued_float(PAGE, "lin_rank") == bt.glued_float(PAGE, "lin_F") == 8
    assert bt.glued_float(PAGE, "causal_gap") < 1e-12
    assert bt.glued_float(PAGE, "ex_lin_gap") < 1e-12


@pytest.mark.build
def test_page_random_feature_errors():
    n, d, seeds = (int(bt.glued_float(PAGE, k)) for k in ("rf_n", "rf_d", "rf_seeds"))
    rng = np.random.default_rng(3)
    Q, K = rng.standard_normal((n, d)) * 0.5, rng.standard_normal((n, d)) * 0.5
    V = rng.standard_normal((n, d))
    Y_soft, _ = oracles.attention(Q, K, V)
    errs = []
    for F in (16, 64, 256, 1024, 4096):
        runs = []
        for s in range(seeds):
            phi = random_features(d, F, np.random.default_rng(100 + s))
            A = phi(Q) @ phi(K).T  # the two-hop weights, formed explicitly
            runs.append(np.sqrt(np.mean((A @ V / A.sum(axis=1, keepdims=True) - Y_soft) ** 2)))
        errs.append(np.mean(runs))
    assert bt.glued_float(PAGE, "rf_err_min_F") == pytest.approx(errs[0], rel=1e-9)
    assert bt.glued_float(PAGE, "rf_err_max_F") == pytest.approx(errs[-1], rel=1e-9)
    slope = np.polyfit(np.log([256, 1024, 4096]), np.log(errs[2:]), 1)[0]
    assert bt.glued_float(PAGE, "rf_slope") == pytest.approx(slope, rel=1e-9)
    assert -0.6 < slope < -0.4  # the prose: close to the Monte Carlo rate
    elu = np.sqrt(np.mean((linear_attention_loop(Q, K, V, elu_plus_one) - Y_soft) ** 2))
    assert bt.glued_float(PAGE, "rf_err_elu") == pytest.approx(elu, rel=1e-9)
    uniform = np.sqrt(np.mean((np.ones((n, n)) / n @ V - Y_soft) ** 2))  # every query: the mean value
    assert bt.glued_float(PAGE, "rf_err_uniform") == pytest.approx(uniform, rel=1e-9)
    # the prose: elu + 1 beats the fewest random features here, and errs about as much as uniform weights
    assert elu < errs[0] and abs(elu - uniform) < 0.2 * uniform


@pytest.mark.build
def test_benchmark_record_meets_its_targets_and_the_page_says_so():
    from attention_graph import bench
    from attention_graph.bench.linear import DENSE_CAP, TARGETS

    record = bench.record("linear")
    res = record["results"]
    assert record["benchmark"] == "linear" and record["quick"] is False
    lin = {c["n"]: c for c in res["cases"] if c["method"] == "linear"}
    dense = {c["n"]: c for c in res["cases"] if c["method"] == "dense"}
    assert max(lin) == TARGETS["n"] == 65536 and max(dense) == DENSE_CAP and res["d"] == res["d_v"] == 64
    assert lin[TARGETS["n"]]["above_inputs_mb"] < TARGETS["memory_mb"] == 200
    fit = sorted(n for n in lin if n >= TARGETS["from_n"])
    from attention_graph.bench.harness import fit_loglog_slope

    slope = fit_loglog_slope(fit, [lin[n]["seconds"] for n in fit])
    assert slope == pytest.approx(res["slope"], rel=1e-12) and slope <= TARGETS["slope"] == 1.1
    assert res["equal_to_quadratic"]["max_abs_diff"] < 1e-12
    glued = {"bench_n": TARGETS["n"], "bench_mem": lin[TARGETS["n"]]["above_inputs_mb"],
             "bench_mem_target": 200, "bench_seconds": lin[TARGETS["n"]]["seconds"], "bench_slope": slope,
             "bench_slope_cpu": res["slope_cpu"], "bench_slope_target": 1.1, "bench_dense_cap": DENSE_CAP,
             "bench_dense_mem_cap": dense[DENSE_CAP]["above_inputs_mb"],
             "bench_lin_mem_cap": lin[DENSE_CAP]["above_inputs_mb"],
             "bench_dense_s_cap": dense[DENSE_CAP]["seconds"], "bench_lin_s_cap": lin[DENSE_CAP]["seconds"],
             "bench_dense_matrix_gib": TARGETS["n"] ** 2 * 8 / 2**30, "bench_cpus": record["machine"]["cpus"]}
    for key, value in glued.items():
        assert bt.glued_float(PAGE, key) == pytest.approx(value, rel=1e-12), key
    # the prose: dense uses more memory and time than linear at the cap
    assert dense[DENSE_CAP]["above_inputs_mb"] > 10 * lin[DENSE_CAP]["above_inputs_mb"]
    assert dense[DENSE_CAP]["seconds"] > lin[DENSE_CAP]["seconds"]


@pytest.mark.slow
def test_benchmark_cli_runs_quick(tmp_path):
    record = bt.quick_benchmark("linear", tmp_path)
    assert {c["method"] for c in record["results"]["cases"]} == {"linear", "dense"}


@pytest.mark.build
def test_exercise_rank_equals_the_number_of_features():
    """The solution's ranks are the bound F, recomputed from W = diag(Z)⁻¹ φ(Q) φ(K)ᵀ written out."""
    Fs = [int(f) for f in bt.glued_plain(PAGE, "ex_lin_Fs").strip("'").split(", ")]
    ranks = [int(r) for r in bt.glued_plain(PAGE, "ex_lin_ranks").strip("'").split(", ")]
    rng = np.random.default_rng(3)
    Q, K = rng.standard_normal((100, 8)), rng.standard_normal((100, 8))
    for F, rank in zip(Fs, ranks, strict=True):
        phi = random_features(8, F, rng)
        PQ, PK = phi(Q), phi(K)
        W = (PQ @ PK.T) / (PQ @ PK.sum(axis=0))[:, None]
        assert rank == np.linalg.matrix_rank(W) == F


# --- Broken variants ------------------------------------------------------------------------------

def after(fn, change):
    """``fn`` followed by ``change`` applied to its result (``fn`` is the original, bound now)."""
    return lambda *args, **kwargs: change(fn(*args, **kwargs))


la = importlib.import_module("attention_graph.linear_attention")


_la_read = la.read_feature_nodes


_la_linear = la.linear_two_hop


# label: (module, name, wrong value, what is broken); gathered by tests/test_can_fail.py
BROKEN = {
    "eq-linear-attention": (la, "read_feature_nodes", lambda PQ, KV, z: PQ @ KV, "no normaliser D"),
    "thm-linear-equals-quadratic": (la, "read_feature_nodes", after(_la_read, lambda Y: Y + 1e-9), "output shifted"),
    "thm-causal-running-sum": (la, "causal_running_sum", _la_linear, "every key seen, not only j <= i"),
    "thm-random-features-unbiased": (la, "standard_normal_density", lambda x: sp.exp(-x**2 / 2),
                                     "the density not normalised"),
}


# --- Bad inputs --------------------------------------------------------------------------------

# (function name, call, error type, message fragment); gathered by tests/test_validation.py
BAD = [
    ("elu_feature_map", lambda: ag.elu_feature_map(nan), ValueError, "X must be finite"),
    ("linear_attention", lambda: ag.linear_attention(ok, ok, np.ones((4, 2))),
     ValueError, "K and V must have the same number of rows"),
    ("linear_attention", lambda: ag.linear_attention(ok, ok, ok, feature_map="elu"),
     TypeError, "feature_map must be callable"),
    ("linear_attention", lambda: ag.linear_attention(ok, ok, ok, feature_map=lambda X: -X),
     ValueError, r"feature_map\(K\) must be non-negative"),
    ("linear_attention", lambda: ag.linear_attention(ok, ok, ok, feature_map=lambda X: X[:2]),
     ValueError, r"feature_map\(K\) must be an array \(n, F\) with one row per row of K"),
    ("linear_attention", lambda: ag.linear_attention(ok, ok, ok, feature_map=lambda X: np.where(X > 0, np.inf, 1.0)),
     ValueError, r"feature_map\(K\) must be finite"),
    ("linear_attention", lambda: ag.linear_attention(ok, ok, ok, feature_map=lambda X: np.zeros_like(X)),
     ValueError, "the normaliser .* of row 0 is 0"),
    ("linear_attention", lambda: ag.linear_attention(ok, np.ones((2, 2)), np.ones((2, 2)), causal=True),
     ValueError, r"causal needs one query per key \(n_q = n_k\): 3 != 2"),
    ("linear_attention", lambda: ag.linear_attention(ok, ok, ok, causal="yes"),
     TypeError, "causal must be True or False"),
    ("linear_attention", lambda: ag.linear_attention(ok, np.ones((0, 2)), np.ones((0, 2))),
     ValueError, "K has no rows"),
    ("linear_weights", lambda: ag.linear_weights(ok, np.ones((3, 4)), feature_map=lambda X: X**2 + 1),
     ValueError, "feature_map must give Q and K the same number F of features: 2 != 4"),
    ("linear_weights", lambda: ag.linear_weights(inf, ok), ValueError, "Q must be finite"),
    ("random_features", lambda: ag.random_features(4, 0, np.random.default_rng(0)),
     ValueError, "F must be a positive integer"),
    ("random_features", lambda: ag.random_features(4, 8, 0), TypeError, "rng must be a numpy.random.Generator"),
    ("RandomFeatures", lambda: ag.RandomFeatures(np.ones(3)), ValueError, "Xi must be a 2-d array"),
    ("RandomFeatures", lambda: ag.RandomFeatures(np.ones((4, 2)))(np.ones((3, 3))),
     ValueError, "X must have d = 2 columns, as Xi"),
]
