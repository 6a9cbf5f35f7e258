"""Blockwise attention and the online softmax: the merge, the function, and what the chapter shows."""

import importlib
import re

import numpy as np
import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

import attention_graph as ag
import booktools as bt
import memtools
import oracles
from attention_graph import attention, bench
from attention_graph.bench import blockwise as bench_blockwise
from attention_graph.blockwise import BlockState, block_state, blockwise_attention, merge
from bad_inputs import inf, nan, ok

PAGE = "blockwise"


def dense(Q, K, V):
    """softmax(Q Kᵀ/√d) V, the oracle's."""
    return oracles.attention(Q, K, V)[0]


def _random(rng, n_q, n_k, d, d_v, scale=1.0):
    return (scale * rng.standard_normal((n_q, d)), rng.standard_normal((n_k, d)),
            rng.standard_normal((n_k, d_v)))


# --- The function ---------------------------------------------------------------------------------

@pytest.mark.parametrize("n_k, block_size", [(1, 1), (7, 1), (7, 3), (7, 7), (7, 50), (64, 8), (65, 8)])
def test_blockwise_equals_attention(n_k, block_size):
    Q, K, V = _random(np.random.default_rng(n_k + block_size), 5, n_k, 4, 3)
    Y = blockwise_attention(Q, K, V, block_size)
    assert Y.shape == (5, 3)
    np.testing.assert_allclose(Y, dense(Q, K, V), rtol=0, atol=1e-12)
    np.testing.assert_allclose(Y, attention(Q, K, V)[0], rtol=0, atol=1e-12)


@given(seed=st.integers(0, 2**32 - 1), n_q=st.integers(0, 6), n_k=st.integers(1, 30),
       d=st.integers(1, 6), d_v=st.integers(1, 4), block_size=st.integers(1, 35),
       scale=st.sampled_from([1e-3, 1.0, 10.0, 100.0]))
def test_blockwise_equals_attention_hypothesis(seed, n_q, n_k, d, d_v, block_size, scale):
    Q, K, V = _random(np.random.default_rng(seed), n_q, n_k, d, d_v, scale)
    Y = blockwise_attention(Q, K, V, block_size)
    assert Y.shape == (n_q, d_v)
    if n_q:
        np.testing.assert_allclose(Y, dense(Q, K, V), rtol=0, atol=1e-12)
        np.testing.assert_allclose(Y, attention(Q, K, V)[0], rtol=0, atol=1e-12)


@pytest.mark.parametrize("block_size", [1, 2, 3, 4])
def test_stable_for_scores_of_magnitude_1e300(block_size):
    K = np.array([[1.0], [-1.0], [0.5], [1.0]])  # (4, 1): d = 1, scores are Q Kᵀ
    V = np.array([[1.0, 0.0], [2.0, 1.0], [3.0, 2.0], [5.0, 3.0]])  # (4, 2)
    Q = np.array([[1e300], [-1e300], [1.7e308], [-1.7e308]])  # (4, 1)
    Y = blockwise_attention(Q, K, V, block_size)
    # +big: keys 0 and 3 tie for the maximum and share the weight; −big: key 1 takes it all.
    expected = np.array([(V[0] + V[3]) / 2, V[1], (V[0] + V[3]) / 2, V[1]])
    assert np.isfinite(Y).all()
    np.testing.assert_allclose(Y, expected, rtol=0, atol=1e-15)
    np.testing.assert_allclose(Y, attention(Q, K, V)[0], rtol=0, atol=1e-15)


def test_the_largest_score_in_the_last_block_rescales_the_earlier_ones_to_zero():
    Q = np.array([[1e300]])
    K = np.array([[-1.0], [0.5], [1.0]])  # the maximum comes last
    V = np.array([[1.0], [2.0], [3.0]])
    assert blockwise_attention(Q, K, V, 1)[0, 0] == 3.0


@pytest.mark.parametrize("bad, error", [
    (0, ValueError), (-3, ValueError), (np.int64(0), ValueError),
    (2.0, TypeError), (2.5, TypeError), (True, TypeError), (False, TypeError), (np.bool_(True), TypeError),
    ("4", TypeError), (None, TypeError),
])
def test_bad_block_sizes_get_a_clear_error(bad, error):
    ones = np.ones((3, 2))
    with pytest.raises(error, match="block_size must be a positive integer"):
        blockwise_attention(ones, ones, ones, bad)


def test_numpy_integer_block_size_is_accepted():
    Q, K, V = _random(np.random.default_rng(1), 2, 5, 3, 2)
    np.testing.assert_allclose(blockwise_attention(Q, K, V, np.int32(2)), dense(Q, K, V), atol=1e-12)


def test_same_conventions_as_attention():
    rng = np.random.default_rng(3)
    Q, K, V = _random(rng, 3, 6, 2, 2)
    f32 = [x.astype(np.float32) for x in (Q, K, V)]
    Y32 = blockwise_attention(*f32, 4)
    assert Y32.dtype == np.float32 == attention(*f32)[0].dtype
    np.testing.assert_allclose(Y32, dense(Q, K, V), atol=1e-6)
    assert blockwise_attention(f32[0], f32[1], V, 4).dtype == np.float64
    assert blockwise_attention(np.ones((0, 2)), K, V, 2).shape == (0, 2)
    assert blockwise_attention([[1, 0]], [[1, 0], [0, 1]], [[1], [3]], 1).dtype == np.float64
    with pytest.raises(ValueError, match="share the dimension d"):
        blockwise_attention(Q, np.ones((6, 3)), V, 2)
    with pytest.raises(ValueError, match="overflowed"):
        blockwise_attention(np.full((1, 1), 1e200), np.full((1, 1), 1e200), np.ones((1, 1)), 1)
    with pytest.raises(TypeError, match="K must hold real numbers"):
        blockwise_attention(Q, K.astype(complex), V, 2)


def _traced_peak(n: int, d: int, b: int) -> int:
    """Peak bytes traced while blockwise_attention runs on (n, d) inputs in blocks of b."""
    setup = f"""
        import numpy as np
        from attention_graph import blockwise_attention
        rng = np.random.default_rng(4)
        Q, K, V = (rng.standard_normal(({n}, {d})) for _ in range(3))
    """
    return memtools.traced_peak(setup, f"blockwise_attention(Q, K, V, {b})")


def test_extra_memory_is_of_order_n_times_block_size():
    d, b = 8, 16
    small, large = _traced_peak(1024, d, b), _traced_peak(2048, d, b)
    n = 2048
    # Twice the queries and keys: linear memory doubles, an (n, n) matrix would quadruple.
    assert large < 2.5 * small
    # A handful of (n, b) slices and (n, d_v) states, far below one dense (n, n) matrix.
    assert large < 12 * (n * b * 8 + n * (d + 2) * 8)
    assert large < n * n * 8 / 5


# --- The step: block_state and merge --------------------------------------------------------------

def test_block_state_is_the_definition():
    S = np.array([[2.0, 0.0, -1.0], [0.0, 0.0, 0.0]])  # (2, 3)
    V = np.array([[1.0, 2.0], [0.0, -1.0], [3.0, 1.0]])  # (3, 2)
    m, ell, o = block_state(S, V)
    E = np.exp(S)
    np.testing.assert_allclose(m[:, 0], [2.0, 0.0])
    np.testing.assert_allclose(ell[:, 0], E.sum(axis=1) / np.exp([2.0, 0.0]), rtol=1e-15)
    np.testing.assert_allclose(o, E @ V / E.sum(axis=1, keepdims=True), rtol=1e-15)


def test_merge_refuses_inconsistent_states():
    good = BlockState(np.zeros((2, 1)), np.ones((2, 1)), np.ones((2, 3)))
    with pytest.raises(ValueError, match="b.ell must be positive"):
        merge(good, BlockState(np.zeros((2, 1)), np.zeros((2, 1)), np.ones((2, 3))))
    with pytest.raises(ValueError, match="a has inconsistent shapes"):
        merge(BlockState(np.zeros((2, 1)), np.ones((3, 1)), np.ones((2, 3))), good)
    with pytest.raises(ValueError, match="a.m must be finite"):
        merge(BlockState(np.full((2, 1), np.nan), np.ones((2, 1)), np.ones((2, 3))), good)


def _states_of_blocks(rng, cuts, n_k=12, d_v=3):
    """Random scores and values of one query (1, n_k), cut into blocks at ``cuts``."""
    s = 5 * rng.standard_normal((1, n_k))
    V = rng.standard_normal((n_k, d_v))
    edges = [0, *cuts, n_k]
    states = [block_state(s[:, a:b], V[a:b]) for a, b in zip(edges, edges[1:])]
    return states, s, V, oracles.softmax(s) @ V


def _fold(states):
    state = states[0]
    for other in states[1:]:
        state = merge(state, other)
    return state


def test_thm_merge_is_union():
    assert bt.verified("thm-merge-is-union") >= 1
    rng = np.random.default_rng(5)
    for cuts in ([1], [6], [11], [3, 4, 9], list(range(1, 12))):
        states, s, V, expected = _states_of_blocks(rng, cuts)
        union = _fold(states)
        np.testing.assert_allclose(union.o, expected, rtol=0, atol=1e-13)
        assert union.m[0, 0] == s.max()
        np.testing.assert_allclose(union.ell[0, 0], np.exp(s - s.max()).sum(), rtol=1e-14)


def test_thm_merge_order():
    assert bt.verified("thm-merge-order") >= 1
    rng = np.random.default_rng(6)
    states, _, _, expected = _states_of_blocks(rng, [2, 3, 7, 8, 10])
    for _ in range(10):
        order = rng.permutation(len(states))
        np.testing.assert_allclose(_fold([states[k] for k in order]).o, expected, rtol=0, atol=1e-13)
    a, b, c = states[:3]
    left, right = merge(merge(a, b), c), merge(a, merge(b, c))
    for x, y in zip(left, right):
        np.testing.assert_allclose(x, y, rtol=1e-14)


@given(seed=st.integers(0, 2**32 - 1), cut=st.integers(1, 11), block=st.integers(1, 12))
def test_any_blocking_gives_the_softmax_of_the_whole_row(seed, cut, block):
    rng = np.random.default_rng(seed)
    states, s, V, expected = _states_of_blocks(rng, [cut])
    np.testing.assert_allclose(merge(*states).o, expected, rtol=0, atol=1e-13)
    np.testing.assert_allclose(merge(states[1], states[0]).o, expected, rtol=0, atol=1e-13)


# --- The trace of Ana's query (what the page shows) -----------------------------------------------

X = oracles.X_WORKED  # Carla, Ana, Bruno, Diego
ANA = 1


def _ana():
    s = X @ X[ANA] / np.sqrt(2)  # (4,)
    w = np.exp(s - s.max())  # the online softmax's normaliser ℓ keeps the unnormalised weights
    return s, w.sum(), oracles.softmax(s) @ X


def _glued_table_rows():
    """The glued trace table's rows (bt.glued_table), step by step: the keys read, m, ℓ and o."""
    table = bt.glued_table(PAGE, "trace_table")
    assert list(table) == [str(step) for step in range(1, len(table) + 1)]  # the steps, in order
    return [{"keys": keys, "m": float(m), "ell": float(ell), "o": [float(x) for x in o.strip("()").split(",")]}
            for keys, m, ell, o in table.values()]


@pytest.mark.build
def test_glued_final_state_matches_an_independent_computation():
    s, ell, o = _ana()
    assert bt.glued_float(PAGE, "trace_m_first") == pytest.approx(s[0], abs=1e-15)  # Carla first
    assert bt.glued_float(PAGE, "trace_m_final") == pytest.approx(s.max(), rel=1e-15)
    assert bt.glued_float(PAGE, "trace_ell_final") == pytest.approx(ell, rel=1e-14)
    assert bt.glued_float(PAGE, "trace_o1") == pytest.approx(o[0], rel=1e-14)
    assert bt.glued_float(PAGE, "trace_o2") == pytest.approx(o[1], rel=1e-14)
    assert bt.glued_float(PAGE, "trace_rescale") == pytest.approx(np.exp(s[0] - s.max()), rel=1e-14)
    assert bt.glued_float(PAGE, "trace_gap_dense") < 1e-14
    assert bt.glued_float(PAGE, "trace_gap_blocks") < 1e-14


@pytest.mark.build
def test_glued_trace_table_is_the_running_state_of_ana():
    rows = _glued_table_rows()
    s = X @ X[ANA] / np.sqrt(2)
    assert [r["keys"] for r in rows] == ["Carla", "Ana", "Bruno", "Diego"]
    for k, row in enumerate(rows):  # after reading keys 0..k
        m = s[:k + 1].max()
        w = np.exp(s[:k + 1] - m)
        assert row["m"] == pytest.approx(m, abs=6e-4)
        assert row["ell"] == pytest.approx(w.sum(), abs=6e-4)
        np.testing.assert_allclose(row["o"], oracles.softmax(s[:k + 1]) @ X[:k + 1], atol=6e-4)


@pytest.mark.build
def test_prose_claims_of_the_trace():
    """Carla's key is orthogonal to Ana's query; the maximum moves once, at step 2 (Ana's own key);
    Bruno and Diego score as much as Ana herself, so each adds exactly 1 to ℓ; step 1 is Carla alone."""
    s = X @ X[ANA] / np.sqrt(2)
    assert s[0] == 0 and s[2] == s[1] == s[3] == s.max()
    rows = _glued_table_rows()
    assert [r["m"] for r in rows].count(rows[0]["m"]) == 1 and rows[1]["m"] == rows[-1]["m"]
    assert rows[0]["ell"] == 1.0 and rows[0]["o"] == list(X[0])
    assert rows[2]["ell"] - rows[1]["ell"] == pytest.approx(1, abs=2e-3)
    assert rows[3]["ell"] - rows[2]["ell"] == pytest.approx(1, abs=2e-3)


@pytest.mark.build
def test_glued_demo_gap_is_a_few_units_in_the_last_place():
    gap = bt.glued_float(PAGE, "demo_max_gap")
    assert 0 <= gap < 1e-14
    n_q, n_k = int(bt.glued_float(PAGE, "demo_nq")), int(bt.glued_float(PAGE, "demo_nk"))
    rng = np.random.default_rng(2022)  # the page's seed and shapes
    Q, K, V = rng.standard_normal((n_q, 4)), rng.standard_normal((n_k, 4)), rng.standard_normal((n_k, 3))
    ours = max(np.abs(blockwise_attention(Q, K, V, b) - dense(Q, K, V)).max() for b in range(1, n_k + 1))
    assert ours < 1e-14


# --- The benchmark record and what the page says about it -----------------------------------------

RECORD = bench.record("blockwise")
RESULTS = RECORD["results"]


def _cases(method):
    return {c["n"]: c for c in RESULTS["cases"] if c["method"] == method}


@pytest.mark.build
def test_committed_record_is_the_full_run_and_meets_the_target():
    target = RESULTS["target"]
    assert RECORD["quick"] is False
    # The target is the largest blockwise run, at the record's d, in float64 (the page says which).
    assert target["n"] == max(_cases("blockwise")) and target["d"] == RESULTS["d"]
    assert RESULTS["dtype"] == "float64"
    assert (bt.glued_float(PAGE, "target_n"), bt.glued_float(PAGE, "target_d")) == (target["n"], target["d"])
    assert target["rss_mb"] < target["target_mb"] == bench_blockwise.TARGET_MB
    assert target["traced_mb"] < target["rss_mb"]
    assert target["max_abs_diff_rows"] < 1e-12 and target["check_rows"] >= 32
    assert RESULTS["equal_to_dense"]["max_abs_diff"] < 1e-12
    assert RESULTS["equal_to_dense"]["n"] == max(_cases("dense"))


@pytest.mark.build
def test_glued_benchmark_values_are_the_record():
    target, equal = RESULTS["target"], RESULTS["equal_to_dense"]
    dense_cases, block_cases = _cases("dense"), _cases("blockwise")
    n_big = max(dense_cases)
    expected = {
        "target_n": target["n"], "target_d": target["d"], "target_mb": target["target_mb"],
        "target_rss_mb": target["rss_mb"], "target_traced_mb": target["traced_mb"],
        "target_check_rows": target["check_rows"], "target_gap": target["max_abs_diff_rows"],
        "target_seconds": block_cases[target["n"]]["seconds"], "bench_block": RESULTS["block_size"],
        "bench_threads": RESULTS["threads"], "bench_cpus": RECORD["machine"]["cpus"],
        "equal_n": equal["n"], "equal_gap": equal["max_abs_diff"], "dense_big_n": n_big,
        "dense_big_rss_mb": dense_cases[n_big]["rss_mb"], "block_big_rss_mb": block_cases[n_big]["rss_mb"],
        "dense_big_matrices": dense_cases[n_big]["traced_mb"] * 2**20 / (n_big**2 * 8),
        "dense_big_seconds": dense_cases[n_big]["seconds"], "block_big_seconds": block_cases[n_big]["seconds"],
        "small_n": min(dense_cases), "dense_small_ms": 1000 * dense_cases[min(dense_cases)]["seconds"],
        "block_small_ms": 1000 * block_cases[min(dense_cases)]["seconds"],
        "sweep_n": RESULTS["block_size_sweep"]["n"],
        "dense_matrix_gib": target["n"] ** 2 * 8 / 2**30,  # recomputed: n² float64 numbers
    }
    for key, value in expected.items():
        assert bt.glued_float(PAGE, key) == pytest.approx(value, rel=1e-12), key
    assert bt.glued_float(PAGE, "dense_matrix_gib") == 2.0


def _slope(xs, ys):
    return float(np.polyfit(np.log(xs), np.log(ys), 1)[0])


def test_prose_claims_of_the_benchmark():
    """Dense memory grows like n², blockwise like n (like its inputs); at the largest size where both
    ran, blockwise uses much less memory; the call's memory grows with the block size."""
    dense_cases, block_cases = _cases("dense"), _cases("blockwise")
    big = sorted(dense_cases)[-3:]
    assert 1.7 < _slope(big, [dense_cases[n]["rss_mb"] for n in big]) < 2.3
    ns = sorted(block_cases)[-3:]
    assert 0.7 < _slope(ns, [block_cases[n]["rss_mb"] for n in ns]) < 1.3
    n_big = max(dense_cases)
    assert block_cases[n_big]["rss_mb"] < dense_cases[n_big]["rss_mb"] / 4
    # "several such matrices at once": dense attention's temporaries at its largest size.
    assert dense_cases[n_big]["traced_mb"] * 2**20 / (n_big**2 * 8) >= 3
    # In this record: blockwise faster at the largest dense size, slower at the smallest.
    assert block_cases[n_big]["seconds"] < dense_cases[n_big]["seconds"]
    n_small = min(dense_cases)
    assert block_cases[n_small]["seconds"] > dense_cases[n_small]["seconds"]
    assert max(block_cases) == RESULTS["target"]["n"] > n_big  # dense not run at the largest size


def test_prose_claims_of_the_block_size_sweep():
    """Memory of the call grows with the block size, in proportion at large blocks; the time is high
    for the smallest blocks and flat beyond."""
    sweep = sorted(RESULTS["block_size_sweep"]["cases"], key=lambda c: c["block_size"])
    traced = [c["traced_mb"] for c in sweep]
    assert traced == sorted(traced)
    b = [c["block_size"] for c in sweep]
    assert 0.7 < _slope(b[-2:], traced[-2:]) < 1.2
    seconds = [c["seconds"] for c in sweep]
    assert seconds[0] > 2 * max(seconds[1:])
    assert max(seconds[1:]) < 1.5 * min(seconds[1:])


@pytest.mark.slow
def test_quick_benchmark_runs_and_reports_every_field():
    results = bench_blockwise.benchmark(quick=True)
    assert {"cases", "block_size_sweep", "equal_to_dense", "target", "memory_note"} <= set(results)
    assert results["equal_to_dense"]["max_abs_diff"] < 1e-12
    assert results["target"]["met"] and results["target"]["max_abs_diff_rows"] < 1e-12
    for case in results["cases"] + results["block_size_sweep"]["cases"]:
        assert case["rss_mb"] >= 0 and case["traced_mb"] > 0 and case["seconds"] > 0


# --- Exercises -------------------------------------------------------------------------------------

@pytest.mark.build
def test_exercise_reverse_order_needs_no_rescaling():
    X = oracles.X_WORKED
    s = X @ X[1] / np.sqrt(2)  # Ana's scores, in the order Carla, Ana, Bruno, Diego

    def rises(order):
        running = np.maximum.accumulate(s[order])
        return int(np.sum(running[1:] > running[:-1]))

    assert bt.glued_float("blockwise", "ex_moves_forward") == rises([0, 1, 2, 3]) == 1
    assert bt.glued_float("blockwise", "ex_moves_reversed") == rises([3, 2, 1, 0]) == 0
    assert bt.glued_plain("blockwise", "ex_reversed_same") == "True"


@pytest.mark.build
def test_exercise_every_block_size_gives_the_dense_output():
    assert bt.glued_plain("blockwise", "ex_sizes_all_equal") == "True"
    X = oracles.X_WORKED
    Y, _ = oracles.attention(X, X, X)
    for b in range(1, 5):
        np.testing.assert_allclose(blockwise_attention(X, X, X, b), Y, rtol=0, atol=1e-14)


@pytest.mark.build
def test_exercise_block_memory():
    n, b = int(bt.glued_float("blockwise", "ex_mem_n")), int(bt.glued_float("blockwise", "ex_mem_block"))
    assert bt.glued_float("blockwise", "ex_mem_block_mib") == n * b * 8 / 2**20
    assert bt.glued_float("blockwise", "ex_mem_full_mib") == n * n * 8 / 2**20


@pytest.mark.build
def test_the_page_glues_the_online_explorables_state():
    import json

    from attention_graph import worked_example as we

    html = bt.glue_data("blockwise")["explore-online"]["data"]["text/html"]
    state = json.loads(re.search(r"<script[^>]*>(.*)</script>", html, re.S).group(1))
    assert state["labels"] == list(we.PEOPLE) and state["query"] == we.index("Ana")
    assert np.array_equal(state["X"], we.embeddings()) and state["block_size"] == 1
    assert np.array_equal(state["dense"], attention(we.embeddings(), we.embeddings(), we.embeddings())[0][1])


# --- Broken variants ------------------------------------------------------------------------------

bw = importlib.import_module("attention_graph.blockwise")


_merge = bw.merge


def after(fn, change):
    """``fn`` followed by ``change`` applied to its result (``fn`` is the original, bound now)."""
    return lambda *args, **kwargs: change(fn(*args, **kwargs))


def _no_rescale(a, b, *, exp, maximum):
    """Merges two states but forgets e^{m_A − m}: wrong whenever the maxima differ."""
    ell = a.ell + b.ell
    return bw.BlockState(maximum(a.m, b.m), ell, (a.ell * a.o + b.ell * b.o) / ell)


def _keep_last(a, b, *, exp, maximum):
    """Neither commutative nor the union."""
    return bw.BlockState(maximum(a.m, b.m), a.ell + b.ell, b.o)


# label: (module, name, wrong value, what is broken); gathered by tests/test_can_fail.py
BROKEN = {
    # blockwise
    "eq-block-normaliser": (bw, "block_state", after(bw.block_state, lambda st: bw.BlockState(
        st.m, 2 * st.ell, st.o)), "the normaliser doubled"),
    "eq-block-output": (bw, "sym_block_state", lambda s, v: bw.BlockState(
        sp.Max(*s), 1, sum((sp.exp(x - sp.Max(*s)) * y for x, y in zip(s, v)), sp.zeros(1, 2))),
        "o not divided by ℓ"),
    "eq-merge-max": (bw, "merge", lambda a, b, *, exp, maximum: bw.BlockState(
        a.m, *_merge(a, b, exp=exp, maximum=maximum)[1:]), "the merged maximum is m_A"),
    "eq-merge-normaliser": (bw, "merge", _no_rescale, "no rescaling by e^{m_A − m}"),
    "eq-merge-output": (bw, "merge", _keep_last, "the merged o is o_b"),
    "thm-merge-is-union": (bw, "merge", _no_rescale, "no rescaling by e^{m_A − m}"),
    "thm-merge-order": (bw, "merge", _keep_last, "the merged o is o_b"),
}


# --- Bad inputs --------------------------------------------------------------------------------

# (function name, call, error type, message fragment); gathered by tests/test_validation.py
BAD = [
    ("blockwise_attention", lambda: ag.blockwise_attention(ok, ok, ok, 0),
     ValueError, "block_size must be a positive integer"),
    ("blockwise_attention", lambda: ag.blockwise_attention(ok, ok, ok, 2.0),
     TypeError, "block_size must be a positive integer"),
    ("blockwise_attention", lambda: ag.blockwise_attention(ok, ok, ok, True), TypeError, "got True of type bool"),
    ("blockwise_attention", lambda: ag.blockwise_attention(ok, ok, nan, 2), ValueError, "V must be finite"),
    ("blockwise_attention", lambda: ag.blockwise_attention(ok, ok, np.ones((4, 2)), 2),
     ValueError, "K and V must have the same number of rows"),
    ("blockwise_attention", lambda: ag.blockwise_attention(ok, np.ones((0, 2)), np.ones((0, 2)), 2),
     ValueError, "K has no rows"),
    ("blockwise_attention_backward", lambda: ag.blockwise_attention_backward(ok, ok, ok, ok, 0),
     ValueError, "block_size must be a positive integer"),
    ("blockwise_attention_backward", lambda: ag.blockwise_attention_backward(ok, ok, ok, ok, 1.5),
     TypeError, "block_size must be a positive integer"),
    ("blockwise_attention_backward", lambda: ag.blockwise_attention_backward(ok, ok, ok, ok[:2], 2),
     ValueError, "dY must have the shape of Y"),
    ("blockwise_attention_backward", lambda: ag.blockwise_attention_backward(ok, ok, ok, inf, 2),
     ValueError, "dY must be finite"),
    ("blockwise_attention_backward",
     lambda: ag.blockwise_attention_backward(ok, np.ones((0, 2)), np.ones((0, 2)), ok, 2),
     ValueError, "K has no rows"),
    ("block_state", lambda: ag.block_state(ok, np.ones((3, 2))), ValueError, "S must have one column per row of V"),
    ("block_state", lambda: ag.block_state(inf, np.ones((2, 2))), ValueError, "S must be finite"),
    ("merge", lambda: ag.merge((0.0, 1.0, ok), (0.0, 1.0, ok)), TypeError, "a must be a BlockState"),
]
