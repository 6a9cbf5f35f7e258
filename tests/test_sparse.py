"""Edge attention: equal to the dense mask, its conventions and errors, its costs, and what the
"Graph Transformers at scale" chapter shows from the committed benchmark record."""


import importlib

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.sparse import csr_array

import attention_graph as ag
import booktools as bt
import memtools
import oracles
from attention_graph import attention, bench, edge_attention, segment_softmax, sparse
from attention_graph.bench.sparse import TARGETS, csr_attention, unsorted_attention
from attention_graph.summaries import sparse_benchmark_summary
from bad_inputs import nan, ok

PAGE = "sparse"


def _dense_reference(Q, K, V, edges):
    """softmax(Q Kᵀ/√d) V with the mask of the edges, written out with plain NumPy."""
    return oracles.attention(Q, K, V, oracles.edges_mask(edges, len(Q), len(K)))


@st.composite
def graphs(draw):
    """Q, K, V and an edge list in random order where every query has at least one edge."""
    n_q = draw(st.integers(1, 9))
    n_k = draw(st.integers(1, 9))
    d = draw(st.integers(1, 5))
    d_v = draw(st.integers(1, 4))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    scale = draw(st.sampled_from([0.1, 1.0, 10.0]))
    Q = rng.standard_normal((n_q, d)) * scale
    K = rng.standard_normal((n_k, d)) * scale
    V = rng.standard_normal((n_k, d_v))
    M = rng.random((n_q, n_k)) < draw(st.floats(0.05, 1.0))
    M[np.arange(n_q), rng.integers(0, n_k, n_q)] = True  # every query keeps at least one key
    edges = rng.permutation(np.argwhere(M))
    return Q, K, V, edges


@given(graphs())
def test_thm_edge_attention_is_masked_attention(case):
    """The theorem, on random graphs: edge attention = the package's dense masked attention."""
    Q, K, V, edges = case
    M = sparse.edges_to_mask(edges, len(Q), len(K))
    Y_dense, W_dense = attention(Q, K, V, mask=M)
    Y, w = edge_attention(Q, K, V, edges, return_weights=True)
    np.testing.assert_allclose(Y, Y_dense, rtol=0, atol=1e-12)
    np.testing.assert_allclose(w, W_dense[edges[:, 0], edges[:, 1]], rtol=0, atol=1e-12)


@given(graphs())
def test_edge_attention_matches_a_plain_numpy_reference(case):
    Q, K, V, edges = case
    Y_ref, W_ref = _dense_reference(Q, K, V, edges)
    Y, w = edge_attention(Q, K, V, edges, return_weights=True)
    np.testing.assert_allclose(Y, Y_ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(w, W_ref[edges[:, 0], edges[:, 1]], rtol=0, atol=1e-12)


def test_edge_attention_on_a_larger_random_graph():
    rng = np.random.default_rng(3)
    n, d = 400, 16
    Q, K, V = (rng.standard_normal((n, d)) for _ in range(3))
    edges = rng.permutation(sparse.random_graph_edges(n, 7, rng))
    Y_ref, _ = _dense_reference(Q, K, V, edges)
    np.testing.assert_allclose(edge_attention(Q, K, V, edges), Y_ref, rtol=0, atol=1e-12)


def test_the_order_of_the_edges_does_not_matter():
    rng = np.random.default_rng(4)
    Q, K, V = (rng.standard_normal((30, 4)) for _ in range(3))
    edges = sparse.random_graph_edges(30, 5, rng)
    perm = rng.permutation(len(edges))
    Y, w = edge_attention(Q, K, V, edges, return_weights=True)
    Y_p, w_p = edge_attention(Q, K, V, edges[perm], return_weights=True)
    np.testing.assert_array_equal(Y, Y_p)  # sorted internally: the very same arithmetic
    np.testing.assert_array_equal(w[perm], w_p)


def test_weights_sum_to_one_per_query():
    rng = np.random.default_rng(5)
    Q, K, V = (rng.standard_normal((50, 3)) for _ in range(3))
    edges = rng.permutation(sparse.random_graph_edges(50, 6, rng))
    _, w = edge_attention(Q, K, V, edges, return_weights=True)
    np.testing.assert_allclose(np.bincount(edges[:, 0], weights=w), 1.0, rtol=0, atol=1e-14)
    assert (w > 0).all()


def test_rectangular_and_float32():
    rng = np.random.default_rng(6)
    Q = rng.standard_normal((3, 4)).astype(np.float32)
    K = rng.standard_normal((5, 4)).astype(np.float32)
    V = rng.standard_normal((5, 2)).astype(np.float32)
    edges = np.array([[0, 4], [1, 0], [1, 2], [2, 3], [2, 4]])
    Y = edge_attention(Q, K, V, edges)
    assert Y.dtype == np.float32 and Y.shape == (3, 2)
    Y64, _ = _dense_reference(Q.astype(float), K.astype(float), V.astype(float), edges)
    np.testing.assert_allclose(Y, Y64, rtol=1e-5, atol=1e-6)


def test_huge_scores_are_stable():
    Q = np.array([[1e150, 0.0], [0.0, 1e150]])
    K = np.array([[1e150, 0.0], [0.0, 1e150], [1e150, 1e150]])
    V = np.array([[1.0], [2.0], [3.0]])
    edges = np.array([[0, 0], [0, 1], [0, 2], [1, 1]])
    Y, w = edge_attention(Q, K, V, edges, return_weights=True)
    np.testing.assert_allclose(w, [0.5, 0.0, 0.5, 1.0])
    np.testing.assert_allclose(Y, [[2.0], [2.0]])


def test_no_queries_gives_an_empty_result():
    Y = edge_attention(np.zeros((0, 3)), np.ones((2, 3)), np.ones((2, 4)), np.zeros((0, 2), int))
    assert Y.shape == (0, 4)


# --- The conventions and the errors ---------------------------------------------------------------

Q3 = K3 = V3 = np.eye(3)


def test_a_query_without_edges_is_refused_like_an_empty_mask_row():
    edges = np.array([[0, 0], [2, 1]])  # query 1 has no edge
    with pytest.raises(ValueError, match=r"query\(ies\) \[1\].*at least one key") as sparse_err:
        edge_attention(Q3, K3, V3, edges)
    with pytest.raises(ValueError, match="at least one key") as dense_err:
        attention(Q3, K3, V3, mask=sparse.edges_to_mask(edges, 3, 3))
    assert type(sparse_err.value) is type(dense_err.value)


@pytest.mark.parametrize("edges, error, message", [
    ([[0, 0], [1, 3], [2, 2]], ValueError, r"edges\[1\] has key index j = 3, outside 0..2"),
    ([[0, 0], [-1, 1], [2, 2]], ValueError, r"edges\[1\] has query index i = -1"),
    ([[0, 0, 0]], ValueError, r"shape \(E, 2\)"),
    ([0, 1], ValueError, r"shape \(E, 2\)"),
    ([[0.0, 1.0], [1.0, 1.0], [2.0, 2.0]], TypeError, "integer array"),
    ([[True, False]], TypeError, "integer array"),
    ([[0, 0], [1, 1], [2, 2], [1, 1]], ValueError, r"edges\[1\] and edges\[3\] are the same edge \(1, 1\)"),
    (np.zeros((0, 2), int), ValueError, "at least one key"),
])
def test_bad_edges_get_clear_errors(edges, error, message):
    with pytest.raises(error, match=message):
        edge_attention(Q3, K3, V3, edges)


def test_repeated_edge_is_named_in_any_order():
    edges = np.array([[2, 2], [1, 1], [0, 0], [2, 2]])
    with pytest.raises(ValueError, match=r"edges\[0\] and edges\[3\] are the same edge \(2, 2\)"):
        edge_attention(Q3, K3, V3, edges)


@pytest.mark.parametrize("Q, K, V, message", [
    (np.ones((2, 3)), np.ones((2, 4)), np.ones((2, 1)), "share the dimension d"),
    (np.ones((2, 3)), np.ones((2, 3)), np.ones((3, 1)), "same number of rows"),
    (np.ones((2, 0)), np.ones((2, 0)), np.ones((2, 1)), "d = 0"),
    (np.array([[np.nan, 1.0], [1.0, 1.0]]), np.ones((2, 2)), np.ones((2, 1)), "Q must be finite"),
    (np.full((2, 1), 1e200), np.full((2, 1), 1e200), np.ones((2, 1)), "overflowed"),
])
def test_bad_arrays_get_clear_errors(Q, K, V, message):
    with pytest.raises(ValueError, match=message):
        edge_attention(Q, K, V, [[0, 0], [1, 1]])


def test_segment_softmax_by_hand_and_its_errors():
    w = segment_softmax([1.0, 2.0, 3.0, -7.0], [0, 3, 4])
    e = np.exp([1.0, 2.0, 3.0])
    np.testing.assert_allclose(w, list(e / e.sum()) + [1.0], rtol=1e-15)
    with pytest.raises(ValueError, match="increase strictly"):
        segment_softmax([1.0, 2.0], [0, 0, 2])  # an empty segment
    with pytest.raises(ValueError, match="end at E"):
        segment_softmax([1.0, 2.0], [0, 1])
    with pytest.raises(ValueError, match="finite"):
        segment_softmax([1.0, np.inf], [0, 2])
    with pytest.raises(TypeError, match="indptr integers"):
        segment_softmax([1.0, 2.0], [0.0, 2.0])


def test_edge_attention_never_allocates_n_by_n():
    """At n = 20 000 one n × n float64 array is 3.2 GB; the call must stay far below one."""
    n, d = 20_000, 8
    setup = f"""
        import numpy as np
        from attention_graph import edge_attention, sparse
        rng = np.random.default_rng(9)
        Q, K, V = (rng.standard_normal(({n}, {d})) for _ in range(3))
        edges = rng.permutation(sparse.random_graph_edges({n}, 5, rng))
    """
    peak = memtools.traced_peak(setup, "edge_attention(Q, K, V, edges, return_weights=True)")
    assert peak < 0.01 * 8 * n * n


def test_the_other_formulations_compute_the_same_layer():
    rng = np.random.default_rng(10)
    n = 500
    Q, K, V = (rng.standard_normal((n, 8)) for _ in range(3))
    edges = sparse.random_graph_edges(n, 6, rng)
    shuffled = rng.permutation(edges)
    A = csr_array((np.ones(len(edges)), (edges[:, 0], edges[:, 1])), shape=(n, n))
    A.sort_indices()
    Y = edge_attention(Q, K, V, shuffled)
    np.testing.assert_allclose(csr_attention(Q, K, V, A), Y, rtol=0, atol=1e-13)
    np.testing.assert_allclose(unsorted_attention(Q, K, V, shuffled), Y, rtol=0, atol=1e-13)


# --- Graphs and costs -----------------------------------------------------------------------------

def test_random_graph_edges():
    rng = np.random.default_rng(11)
    edges = sparse.random_graph_edges(200, 8, rng)
    assert edges.shape == (1600, 2) and edges.dtype == np.int64
    assert len({(int(i), int(j)) for i, j in edges}) == 1600  # no repeated edge
    assert (np.bincount(edges[:, 0], minlength=200) == 8).all()
    assert {(i, i) for i in range(200)} <= {(int(i), int(j)) for i, j in edges}
    key = edges[:, 0] * 200 + edges[:, 1]
    assert (np.diff(key) > 0).all()  # sorted by (i, j)
    np.testing.assert_array_equal(edges, sparse.random_graph_edges(200, 8, np.random.default_rng(11)))
    with pytest.raises(TypeError, match="rng"):
        sparse.random_graph_edges(10, 3, 0)
    with pytest.raises(ValueError, match="degree"):
        sparse.random_graph_edges(3, 4, rng)


def test_edges_from_adjacency_and_back():
    A = np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0]])
    edges = sparse.edges_from_adjacency(A, self_loops=False)
    assert edges.tolist() == [[0, 1], [1, 2], [2, 0]]
    np.testing.assert_array_equal(sparse.edges_to_mask(edges, 3, 3), A.astype(bool))
    with_loops = sparse.edges_from_adjacency(A)
    assert with_loops.tolist() == [[0, 0], [0, 1], [1, 1], [1, 2], [2, 0], [2, 2]]
    W = sparse.edge_weight_matrix([0.5, 0.25, 1.0], edges, 3, 3)
    assert W[0, 1] == 0.5 and W[1, 2] == 0.25 and W[2, 0] == 1.0 and W.sum() == 1.75


def test_cost_counts():
    c = sparse.cost_counts(1000, 5000, 16)
    assert c == {"dense_scores": 1_000_000, "sparse_scores": 5000, "dense_madds": 32_000_000,
                 "sparse_madds": 160_000, "dense_weight_bytes": 8_000_000,
                 "sparse_weight_bytes": 5000 * 16 + 1001 * 8}


# --- The four people on the page -------------------------------------------------------------------

@pytest.mark.build
def test_page_four_people_agree_with_masked_attention():
    assert bt.glued_float(PAGE, "four_E") == 10  # 4 self-loops and 3 path edges both ways
    assert bt.glued_float(PAGE, "four_pairs") == 16
    assert bt.glued_float(PAGE, "four_gap") < 1e-15
    assert bt.glued_float(PAGE, "four_w_gap") < 1e-15


@pytest.mark.build
def test_page_chunk_is_the_package_constant():
    assert bt.glued_float(PAGE, "chunk") == sparse.CHUNK


# --- The benchmark record and what the page says about it ----------------------------------------

def _record():
    return bench.record("sparse")


def test_the_committed_record_is_a_full_run_with_its_machine():
    rec = _record()
    assert rec["benchmark"] == "sparse" and rec["quick"] is False
    for key in ("platform", "cpus", "python", "numpy", "scipy", "date"):
        assert rec["machine"][key]
    res = rec["results"]
    assert res["d"] == 64 and res["dtype"] == "float64"
    Es = [r["E"] for r in res["sizes"]]
    assert min(Es) <= 1e4 and max(Es) >= 1e6
    assert all(r["E"] == res["degree"] * r["n"] for r in res["sizes"])


@pytest.mark.build
def test_glued_costs_recomputed_by_hand():
    n, E, d = (int(bt.glued_float(PAGE, k)) for k in ("cost_n", "cost_E", "cost_d"))
    assert (n, E, d) == (100_000, 1_000_000, 64)
    assert bt.glued_float(PAGE, "cost_dense_scores") == n * n
    assert bt.glued_float(PAGE, "cost_sparse_scores") == E
    assert bt.glued_float(PAGE, "cost_score_factor") == n * n // E
    assert bt.glued_float(PAGE, "cost_dense_gb") == pytest.approx(8 * n * n / 2**30)  # GiB
    assert bt.glued_float(PAGE, "cost_sparse_mb") == pytest.approx((16 * E + 8 * (n + 1)) / 2**20)  # MiB


@pytest.mark.build
def test_glued_benchmark_figures_are_the_records():
    res = _record()["results"]
    top = res["sizes"][-1]
    fit = [r for r in res["sizes"] if 1e4 <= r["E"] <= 1e6]
    slope = np.polyfit(np.log([r["E"] for r in fit]), np.log([r["sparse_seconds"] for r in fit]), 1)[0]
    slope_cpu = np.polyfit(np.log([r["E"] for r in fit]),
                           np.log([r["sparse_cpu_seconds"] for r in fit]), 1)[0]
    assert bt.glued_float(PAGE, "bench_slope") == pytest.approx(slope, rel=1e-12)
    assert bt.glued_float(PAGE, "bench_slope_cpu") == pytest.approx(slope_cpu, rel=1e-12)
    assert bt.glued_float(PAGE, "bench_slope_points") == len(fit)
    best = min(top["csr_seconds"], top["unsorted_at_seconds"])
    assert bt.glued_float(PAGE, "bench_ratio") == pytest.approx(top["sparse_seconds"] / best, rel=1e-12)
    assert bt.glued_float(PAGE, "bench_best_seconds_top") == pytest.approx(best, rel=1e-12)
    best_cpu = min(top["csr_cpu_seconds"], top["unsorted_at_cpu_seconds"])
    assert bt.glued_float(PAGE, "bench_ratio_cpu") == pytest.approx(
        top["sparse_cpu_seconds"] / best_cpu, rel=1e-12)
    assert bt.glued_float(PAGE, "bench_ratio_E") == top["E"] == 1_000_000
    assert bt.glued_float(PAGE, "bench_call_peak_mb") == pytest.approx(top["sparse_peak_bytes"] / 2**20)
    assert bt.glued_float(PAGE, "bench_input_mb") == pytest.approx(
        (3 * top["n"] * 64 * 8 + top["E"] * 2 * 8) / 2**20)
    flag = res["flagship"]
    assert bt.glued_float(PAGE, "bench_process_peak_mb") == pytest.approx(flag["process_peak_bytes"] / 2**20)
    assert bt.glued_float(PAGE, "bench_call_rss_peak_mb") == pytest.approx(flag["call_peak_rss_bytes"] / 2**20)
    assert bt.glued_float(PAGE, "bench_rss_before_mb") == pytest.approx(flag["rss_before_bytes"] / 2**20)
    assert bt.glued_float(PAGE, "bench_gather_share") == pytest.approx(top["gather_seconds"] / best)
    dense = [r for r in res["sizes"] if "dense_seconds" in r][-1]
    assert bt.glued_float(PAGE, "bench_dense_over_sparse_at_dense_max") == pytest.approx(
        dense["dense_seconds"] / dense["sparse_seconds"])


@pytest.mark.build
def test_the_targets_the_page_reports_met_are_met():
    """The page says the record shows each target: slope ≤ 1.15, peak < 1 GB, ratio ≤ 2."""
    res = _record()["results"]
    top, flag = res["sizes"][-1], res["flagship"]
    assert (flag["n"], flag["E"], flag["d"]) == (100_000, 1_000_000, 64)
    assert bt.glued_float(PAGE, "bench_slope") <= TARGETS["slope"] == 1.15
    assert flag["process_peak_bytes"] < TARGETS["peak_bytes"] == 1e9
    assert flag["hwm_reset"]  # the call's own peak was measured, not the setup's
    assert flag["rss_before_bytes"] < flag["call_peak_rss_bytes"] <= flag["process_peak_bytes"]
    assert top["sparse_peak_bytes"] + top["input_bytes"] < 1e9
    assert bt.glued_float(PAGE, "bench_ratio") <= TARGETS["ratio"] == 2.0
    assert flag["finite"]


@pytest.mark.build
def test_page_prose_claims_about_the_record():
    """Dense is many times slower at its largest n; the sorted input is the faster path; the
    gathering of rows is a real share of the time; a dense W at n = 1e5 would be 8·10¹⁰ bytes; the
    slope is below 1 because the smallest sizes cost more per edge than the largest."""
    assert bt.glued_float(PAGE, "bench_dense_over_sparse_at_dense_max") > 10
    assert bt.glued_float(PAGE, "bench_sorted_seconds_top") < bt.glued_float(PAGE, "bench_sparse_seconds_top")
    assert 0.1 < bt.glued_float(PAGE, "bench_gather_share") < 1
    assert bt.glued_float(PAGE, "bench_dense_w_gb") == pytest.approx(8e10 / 2**30)  # 74.5 GiB
    # The dense peak is several n × n arrays; the edge layer's small sizes sit at its two buffers.
    res = _record()["results"]
    dense = [r for r in res["sizes"] if "dense_seconds" in r][-1]
    assert bt.glued_float(PAGE, "bench_dense_peak_over_one_w") == pytest.approx(
        dense["dense_peak_bytes"] / (8 * dense["n"] ** 2))
    assert bt.glued_float(PAGE, "bench_dense_peak_over_one_w") > 2
    buffers = 2 * sparse.CHUNK * 64 * 8
    assert bt.glued_float(PAGE, "bench_block_buffer_mb") == pytest.approx(buffers / 2**20)
    small = [r["sparse_peak_bytes"] for r in res["sizes"] if 4 * sparse.CHUNK <= r["E"] <= 40_000]
    assert small and all(buffers <= b < 1.5 * buffers for b in small)
    big = [r["sparse_peak_bytes"] for r in res["sizes"]]
    assert big[-1] > 10 * buffers
    assert bt.glued_float(PAGE, "bench_cpus") == _record()["machine"]["cpus"]
    fit = [r for r in _record()["results"]["sizes"] if 1e4 <= r["E"] <= 1e6]
    if bt.glued_float(PAGE, "bench_slope") < 1:
        per_edge = [r["sparse_seconds"] / r["E"] for r in fit]
        assert per_edge[0] > per_edge[-1]


@pytest.mark.slow
def test_the_benchmark_runs_from_the_command_line(tmp_path):
    rec = bt.quick_benchmark("sparse", tmp_path)
    assert rec["results"]["sizes"]
    assert rec["results"]["flagship"]["finite"]
    assert sparse_benchmark_summary(rec)["quick"] is True


# --- Exercises -------------------------------------------------------------------------------------

@pytest.mark.build
def test_exercise_path_count():
    n = int(bt.glued_float("sparse", "ex_path_n"))
    assert bt.glued_float("sparse", "ex_path_E") == 3 * n - 2
    assert bt.glued_float("sparse", "ex_path_factor") == pytest.approx(n**2 / (3 * n - 2))


@pytest.mark.build
def test_exercise_cross_attention_is_bipartite_edge_attention():
    X = oracles.X_WORKED
    Qc = np.eye(2)
    assert bt.glued_plain("sparse", "ex_cross_same") == "True"
    y = oracles.attention(Qc[:1], X[:2], X[:2])[0][0]  # query 0 sees Carla and Ana only
    assert bt.glued_float("sparse", "ex_cross_first") == pytest.approx(y[0], abs=1e-15)
    assert bt.glued_float("sparse", "ex_cross_second") == pytest.approx(y[1], abs=1e-15)


@pytest.mark.build
def test_exercise_isolated_query_is_refused():
    msg = bt.glued_plain("sparse", "ex_isolated_message")
    assert "every query must attend to at least one key" in msg and "[3]" in msg


# --- Broken variants ------------------------------------------------------------------------------

sm = importlib.import_module("attention_graph.softmax")


spm = importlib.import_module("attention_graph.sparse")


def after(fn, change):
    """``fn`` followed by ``change`` applied to its result (``fn`` is the original, bound now)."""
    return lambda *args, **kwargs: change(fn(*args, **kwargs))


# label: (module, name, wrong value, what is broken); gathered by tests/test_can_fail.py
BROKEN = {
    # sparse
    "eq-edge-softmax": (spm, "segment_softmax", lambda s, indptr: np.exp(np.asarray(s, float)),
                        "not normalised per segment"),
    "eq-edge-attention": (spm, "edge_attention", after(spm.edge_attention, lambda Y: Y + 1e-6),
                          "output shifted"),
    "thm-edge-attention-is-masked-attention": (spm, "exact_masked_softmax", lambda S, mask: sm.RowSoftmax(
        S).doit(), "forbidden entries kept"),
}


# --- Bad inputs --------------------------------------------------------------------------------

# (function name, call, error type, message fragment); gathered by tests/test_validation.py
BAD = [
    ("edge_attention", lambda: ag.edge_attention(ok, ok, ok, [[0, 0], [2, 2]]), ValueError, "no edge to query"),
    ("edge_attention", lambda: ag.edge_attention(ok, ok, ok, [[0, 0], [1, 3], [2, 2]]), ValueError, "outside 0..2"),
    ("edge_attention", lambda: ag.edge_attention(ok, ok, ok, [[0, 0], [1, 1], [2, 2], [0, 0]]),
     ValueError, "same edge"),
    ("edge_attention", lambda: ag.edge_attention(ok, ok, ok, [[0.0, 0.0]]), TypeError, "integer array"),
    ("edge_attention", lambda: ag.edge_attention(ok, ok, nan, [[0, 0], [1, 1], [2, 2]]),
     ValueError, "V must be finite"),
    ("segment_softmax", lambda: ag.segment_softmax([1.0, 2.0], [0, 0, 2]), ValueError, "increase strictly"),
    ("segment_softmax", lambda: ag.segment_softmax([1.0, np.nan], [0, 2]), ValueError, "s must be finite"),
]
