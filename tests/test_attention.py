"""The whole layer: attention(Q, K, V) returns (Y, W) with W = softmax(Q Kᵀ/√d) and Y = W V."""

import numpy as np
import pytest

from attention_graph import attention


def test_attention_is_softmax_of_scaled_scores_times_values():
    rng = np.random.default_rng(2)
    Q, K, V = rng.standard_normal((3, 4)), rng.standard_normal((5, 4)), rng.standard_normal((5, 2))
    Y, W = attention(Q, K, V)
    E = np.exp(Q @ K.T / 2.0)  # √d = 2
    np.testing.assert_allclose(W, E / E.sum(axis=1, keepdims=True), rtol=1e-13)
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
