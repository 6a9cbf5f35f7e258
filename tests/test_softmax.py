"""Softmax, row by row: the spine's guarantees (the chapter's theorems add their own tests)."""

import numpy as np
import pytest

from attention_graph import softmax


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
