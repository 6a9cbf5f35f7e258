"""Linear attention: the feature maps, the linear form against the paper's quadratic loop
(tests/oracles.py), the causal running sum and the random features' unbiasedness."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import booktools as bt
import oracles
from attention_graph import RandomFeatures, elu_feature_map, linear_attention, linear_weights, random_features

PAGE = "linear_attention"


def test_elu_feature_map_is_elu_plus_one():
    X = np.linspace(-5, 5, 41)[:, None] * np.ones((1, 3))
    np.testing.assert_allclose(elu_feature_map(X), oracles.elu_plus_one(X), rtol=1e-15, atol=0)
    assert (elu_feature_map(X) > 0).all()


@settings(derandomize=True, max_examples=40)
@given(n_q=st.integers(1, 6), n_k=st.integers(1, 6), d=st.integers(1, 5), d_v=st.integers(1, 4),
       seed=st.integers(0, 2**32 - 1))
def test_linear_attention_is_the_papers_quadratic_loop(n_q, n_k, d, d_v, seed):
    rng = np.random.default_rng(seed)
    Q, K, V = rng.standard_normal((n_q, d)), rng.standard_normal((n_k, d)), rng.standard_normal((n_k, d_v))
    np.testing.assert_allclose(linear_attention(Q, K, V), oracles.linear_attention_loop(Q, K, V, oracles.elu_plus_one),
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
    np.testing.assert_allclose(linear_attention(Q, K, V, phi), oracles.linear_attention_loop(Q, K, V, phi),
                               rtol=0, atol=1e-12)


def test_thm_causal_running_sum():
    assert bt.verified("thm-causal-running-sum") >= 1
    rng = np.random.default_rng(12)
    Q, K, V = rng.standard_normal((15, 3)), rng.standard_normal((15, 3)), rng.standard_normal((15, 2))
    got = linear_attention(Q, K, V, causal=True)
    np.testing.assert_allclose(got, oracles.linear_attention_loop(Q, K, V, oracles.elu_plus_one, causal=True),
                               rtol=0, atol=1e-12)
    for i in range(15):  # row i is linear attention over the first i + 1 tokens
        np.testing.assert_allclose(got[i], linear_attention(Q[i:i + 1], K[:i + 1], V[:i + 1])[0], rtol=0, atol=1e-12)


def test_thm_random_features_unbiased():
    assert bt.verified("thm-random-features-unbiased") >= 1
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
