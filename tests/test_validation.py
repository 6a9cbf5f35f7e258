"""Bad input to every public function: a clear error naming the argument, never a silent wrong answer.

The table lists each bad input and the error it must raise. The rows are grouped by function; every
function of the public API appears (``test_every_public_function_is_in_the_table``). A chapter keeps
its rows in its own test file, ``tests/test_<stem>.py``, as a list ``BAD`` of the same form; they are
gathered here, and this file keeps only the collector, the rows of helpers of no one chapter and the
rules every function obeys (dtypes, empty input, the implementations agreeing).
"""

import subprocess
import sys

import numpy as np
import pytest

import attention_graph as ag
import booktools as bt
from attention_graph import validation
from attention_graph.softmax import raw_score_row
from bad_inputs import ok, path

# (function name, call, error type, message fragment). Every chapter's rows live in its own test file
# (the shared inputs in tests/bad_inputs.py); this table holds only the rows of functions of no chapter.
BAD = [
    ("fixed_to_computed", lambda: ag.graph.fixed_to_computed(ok, path, 2.5), ValueError, r"t must be in \[0, 2\]"),
    ("fixed_to_computed", lambda: ag.graph.fixed_to_computed(ok, path, "1"), TypeError, "t must be a real number"),
    ("fixed_to_computed", lambda: ag.graph.fixed_to_computed(ok, np.ones((2, 2)), 1.0), ValueError, "one row per row of X"),
    ("raw_score_row", lambda: raw_score_row(0, 3, np.random.default_rng(0)), ValueError, "d must be"),
    ("raw_score_row", lambda: raw_score_row(2, 3, 0), TypeError, "rng"),
]


# A chapter's own rows live in its test file (tests/test_<stem>.py: BAD = [row, ...]).
for _rows in bt.chapter_tables("BAD", "test_validation").values():
    BAD += _rows


@pytest.mark.parametrize("name, call, error, message", BAD, ids=[f"{b[0]}-{k}" for k, b in enumerate(BAD)])
def test_bad_input_raises_a_clear_error(name, call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_errors_are_valueerror_or_typeerror_subclasses():
    assert all(issubclass(error, (ValueError, TypeError)) for *_, error, _ in BAD)


def test_every_public_function_is_in_the_table():
    public = {name for name in ag.__all__ if callable(getattr(ag, name))} - {"DerivationError"}
    assert public <= {row[0] for row in BAD}, public - {row[0] for row in BAD}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_dtype_is_kept(dtype):
    Q = np.arange(6, dtype=dtype).reshape(3, 2) / 7  # (n, d)
    Y, W = ag.attention(Q, Q, Q)
    assert ag.scaled_scores(Q, Q).dtype == dtype and W.dtype == dtype and Y.dtype == dtype


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_dtype_is_kept_by_every_implementation(dtype):
    Q = (np.arange(6, dtype=dtype).reshape(3, 2) / 7).astype(dtype)  # (n, d)
    edges = np.array([[0, 0], [1, 1], [2, 2], [0, 1], [2, 0]])  # (E, 2)
    assert ag.edge_attention(Q, Q, Q, edges).dtype == dtype
    assert ag.blockwise_attention(Q, Q, Q, 2).dtype == dtype


def test_no_queries_gives_empty_results_in_every_implementation():
    Q0, K = np.zeros((0, 2)), np.ones((3, 2))  # (0, d), (n_k, d)
    assert ag.edge_attention(Q0, K, K, np.zeros((0, 2), dtype=int)).shape == (0, 2)
    assert ag.blockwise_attention(Q0, K, K, 2).shape == (0, 2)


def test_a_mix_of_float32_and_float64_computes_in_float64():
    Q = np.ones((3, 2), dtype=np.float32)
    Y, W = ag.attention(Q, Q, Q.astype(np.float64))
    assert Y.dtype == np.float64


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.bool_])
def test_integer_and_boolean_inputs_are_converted_to_float64(dtype):
    X = np.array([[0, 1], [1, 0], [1, 1]], dtype=dtype)  # (n, d)
    Y, W = ag.attention(X, X, X)
    Yf, Wf = ag.attention(X.astype(float), X.astype(float), X.astype(float))
    assert Y.dtype == np.float64
    np.testing.assert_array_equal(Y, Yf)


def test_no_queries_gives_empty_results_of_the_right_shape():
    Y, W = ag.attention(np.zeros((0, 2)), ok, np.ones((3, 5)))
    assert Y.shape == (0, 5) and W.shape == (0, 3)


def test_one_token_attends_to_itself_with_weight_one():
    Y, W = ag.attention([[3.0, -1.0]], [[3.0, -1.0]], [[2.0, 5.0]])
    np.testing.assert_array_equal(W, [[1.0]])
    np.testing.assert_array_equal(Y, [[2.0, 5.0]])


def test_all_scores_equal_gives_uniform_weights():
    W = ag.softmax(np.full((2, 4), 7.5))
    np.testing.assert_array_equal(W, np.full((2, 4), 0.25))


def test_scores_of_magnitude_1e300_give_finite_correct_weights():
    S = np.array([[1e300, 0.0, -1e300], [-1e300, -1e300, 1e300], [1e300, 1e300, 1e300]])
    W = ag.softmax(S)
    np.testing.assert_array_equal(W, [[1, 0, 0], [0, 0, 1], [1 / 3, 1 / 3, 1 / 3]])


@pytest.mark.slow
def test_input_checks_survive_python_O():
    code = "import attention_graph as ag\ntry:\n    ag.softmax([[1.0, float('nan')]])\nexcept ValueError:\n    print('refused')"
    out = subprocess.run([sys.executable, "-O", "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "refused", out.stderr


def test_as_edges_refuses_bad_edges():
    with pytest.raises(TypeError, match="edges must be an integer array"):
        validation.as_edges(np.ones((2, 2)), "edges", 3, 3)
    with pytest.raises(ValueError, match=r"edges\[1\] has key index j = 3, outside 0..2"):
        validation.as_edges([[0, 1], [1, 3]], "edges", 3, 3)
    with pytest.raises(ValueError, match=r"edges\[0\] has query index i = -1"):
        validation.as_edges([[-1, 1]], "edges", 3, 3)
    with pytest.raises(ValueError, match=r"shape \(E, 2\)"):
        validation.as_edges([[0, 1, 2]], "edges", 3, 3)
    assert validation.as_edges(np.zeros((0, 2), int), "edges", 3, 3).shape == (0, 2)


# --- Every implementation agrees: dense, masked all-True, edge list on the complete graph, blockwise --

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(derandomize=True)
@given(n_q=st.integers(1, 7), n_k=st.integers(1, 7), d=st.integers(1, 5), d_v=st.integers(1, 4),
       block=st.integers(1, 8), scale=st.sampled_from([1e-3, 1.0, 30.0]), seed=st.integers(0, 2**32 - 1))
def test_all_implementations_agree(n_q, n_k, d, d_v, block, scale, seed):
    rng = np.random.default_rng(seed)
    Q = rng.standard_normal((n_q, d)) * scale  # (n_q, d)
    K = rng.standard_normal((n_k, d)) * scale  # (n_k, d)
    V = rng.standard_normal((n_k, d_v))  # (n_k, d_v)
    Y, W = ag.attention(Q, K, V)
    Y_mask, W_mask = ag.attention(Q, K, V, mask=np.ones((n_q, n_k), dtype=bool))
    edges = np.array([(i, j) for i in range(n_q) for j in range(n_k)])  # (E, 2), the complete graph
    Y_edges = ag.edge_attention(Q, K, V, edges)
    Y_block = ag.blockwise_attention(Q, K, V, block)
    np.testing.assert_array_equal(Y_mask, Y)
    np.testing.assert_allclose(Y_edges, Y, rtol=0, atol=1e-12)
    np.testing.assert_allclose(Y_block, Y, rtol=0, atol=1e-12)


def test_the_api_page_documents_every_public_name():
    """book/api.md's chapter sections come from the package data (data/api.json, written from each
    module's ``__all__``): every public name but the error class and the worked-example module is there."""
    import inspect
    import json

    import package_data

    chapters = json.loads(package_data.api_json())["chapters"]
    listed = [item["name"] for chapter in chapters for item in chapter["names"]]
    public = [n for n in ag.__all__ if not inspect.ismodule(getattr(ag, n)) and n != "DerivationError"]
    assert sorted(listed) == sorted(public)
    assert "```{api-chapters}" in (bt.ROOT / "book" / "api.md").read_text()


@pytest.mark.build
def test_the_built_api_page_has_an_entry_for_every_public_name():
    import inspect

    import buildpaths as paths

    html = (paths.HTML / "book" / "api.html").read_text()
    public = [n for n in ag.__all__ if not inspect.ismodule(getattr(ag, n)) and n != "DerivationError"]
    assert [n for n in public if f'id="attention_graph.{n}"' not in html] == []
