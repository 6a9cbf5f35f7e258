"""The worked example: every claim of the article and of the chapter, recomputed independently.

The article's published numbers appear here as what they are, the source's rounded claims
(``round(x, 3) == 0.141``); every other expected value is computed in the test with plain NumPy from
the four input vectors, not read from the package function under test.
"""

import importlib
import itertools
import math
import re

import numpy as np
import pytest

import booktools as bt
import buildpaths as paths
import oracles
from attention_graph import registry, tables
from attention_graph import worked_example as we
from attention_graph.plots import plot_attention_graph, plot_plane_movement
from attention_graph.qkv import rotation

PAGE = "worked_example"
RECOVERY = "recovery"
C, A, B, D = 0, 1, 2, 3  # Carla, Ana, Bruno, Diego: the order of the article's matrices
# The vectors of ../shared/seed/README.md, recovered from the article's numbers.
X_README = oracles.X_WORKED


def glued(key):
    return bt.glued_float(PAGE, key)


def recovered(key):
    """A number glued by the appendix that recovers the lost inputs (book/recovery.md)."""
    return bt.glued_float(RECOVERY, key)


def independent_layer(X):
    """S, W, Y of one attention layer with Q = K = V = X, in plain NumPy."""
    Y, W = oracles.attention(X, X, X)
    return oracles.scaled_scores(X, X), W, Y


S, W, Y = independent_layer(X_README)


def test_package_data_is_the_recovered_example():
    assert we.PEOPLE == ("Carla", "Ana", "Bruno", "Diego")
    np.testing.assert_array_equal(we.embeddings(), X_README)
    Y_pkg, graph = we.attention_layer()
    np.testing.assert_allclose(graph.W, W, rtol=0, atol=1e-15)
    np.testing.assert_allclose(Y_pkg, Y, rtol=0, atol=1e-15)
    assert graph.labels == we.PEOPLE


# --- The article's claims, one test each ----------------------------------------------------------

@pytest.mark.build
def test_claim_bruno_and_diego_have_the_two_largest_scores():
    assert glued("s_bb") == pytest.approx(S[B, B], abs=1e-15)
    assert glued("s_dd") == pytest.approx(S[D, D], abs=1e-15)
    assert round(glued("s_bb"), 3) == 1.414 and round(glued("s_dd"), 3) == 1.414  # the article
    assert bt.glued_plain(PAGE, "s_bb_dd_words").strip("'") == "1.414 each"  # equal, and said so
    # Precisely: both are exactly √2 (a tie), and they are the only entries at the maximum.
    assert S[B, B] == S[D, D] == pytest.approx(math.sqrt(2), abs=1e-15)
    at_max = {tuple(ij) for ij in np.argwhere(np.isclose(S, S.max(), rtol=0, atol=1e-12))}
    assert at_max == {(B, B), (D, D)}
    assert glued("s_top_count") == 2


@pytest.mark.build
def test_the_next_score_down_ties_the_other_diagonal_entries():
    second = S[~np.isclose(S, S.max(), rtol=0, atol=1e-12)].max()
    assert second == pytest.approx(1 / math.sqrt(2), abs=1e-15)
    assert glued("s_second") == pytest.approx(second, abs=1e-15)
    assert glued("s_second_count") == int(np.isclose(S, second, rtol=0, atol=1e-12).sum())
    assert glued("s_cc") == glued("s_aa") == pytest.approx(second, abs=1e-15)
    assert S[C, C] == S[C, B]  # Carla's self-score ties with her score for Bruno
    assert S[A, A] == S[A, B] == S[A, D]  # Ana's with hers for Bruno and Diego
    # "the diagonal is the largest entry of its row for everybody, strictly only for Bruno and Diego"
    for i in range(4):
        assert S[i, i] == S[i].max()
        assert (np.sum(np.isclose(S[i], S[i, i], rtol=0, atol=1e-12)) == 1) == (i in (B, D))


@pytest.mark.build
def test_claim_weight_ana_gives_carla():
    assert X_README[A] @ X_README[C] == 0  # Ana's query and Carla's key: dot product exactly zero
    exact = 1 / (1 + 3 * math.exp(1 / math.sqrt(2)))
    assert glued("w_ac") == pytest.approx(exact, abs=1e-15)
    assert glued("w_ac") == pytest.approx(W[A, C], abs=1e-15)
    assert round(glued("w_ac"), 3) == 0.141  # the article


@pytest.mark.build
def test_plain_numpy_cell_gives_the_packages_weight():
    """The visible five-line cell of §7.1 and the package's attention agree on Ana's weight for Carla."""
    exact = 1 / (1 + 3 * math.exp(math.sqrt(2) / 2))
    _, graph = we.attention_layer()
    assert glued("w_ac_plain") == pytest.approx(exact, abs=1e-15)
    assert glued("w_ac_plain") == pytest.approx(float(graph.W[A, C]), abs=1e-15)


@pytest.mark.build
def test_claim_ana_splits_the_rest_in_equal_thirds():
    rest = W[A, [A, B, D]]
    np.testing.assert_allclose(rest, rest[0], rtol=0, atol=1e-15)
    assert glued("w_ana_rest") == pytest.approx((1 - W[A, C]) / 3, abs=1e-15)
    assert glued("w_ana_rest_count") == 3


@pytest.mark.build
def test_claim_bruno_attends_most_to_himself():
    assert glued("w_bb") == pytest.approx(W[B, B], abs=1e-15)
    assert round(glued("w_bb"), 3) == 0.449  # the article
    others = np.delete(W[B], B)
    assert W[B, B] > others.max()  # strictly the largest of his row
    assert glued("w_bruno_next") == pytest.approx(others.max(), abs=1e-15)
    assert W[B, C] == pytest.approx(W[B, A], abs=1e-15) == others.max()  # "his weight for Carla and for Ana"


@pytest.mark.build
def test_claim_diego_attends_to_himself():
    assert glued("w_dd") == pytest.approx(W[D, D], abs=1e-15)
    assert round(glued("w_dd"), 3) == 0.539  # the article
    assert np.unravel_index(W.argmax(), W.shape) == (D, D)  # "the largest weight of the whole matrix"
    assert glued("w_min") == pytest.approx(W.min(), abs=1e-15)
    assert np.unravel_index(W.argmin(), W.shape) == (D, C) and W.min() > 0


@pytest.mark.build
def test_graph_figure_labels_the_carla_bruno_pair():
    """Fig. worked-graph labels the two arcs between Carla and Bruno; the caption glues their
    weights, equal to W recomputed here with plain NumPy from the four vectors."""
    S_ = X_README @ X_README.T / math.sqrt(2)  # (4, 4)
    W_ = np.exp(S_) / np.exp(S_).sum(axis=1, keepdims=True)  # (4, 4)
    assert glued("w_cb") == pytest.approx(W_[C, B], abs=1e-15)  # the arc from Bruno to Carla
    assert glued("w_bc") == pytest.approx(W_[B, C], abs=1e-15)  # the arc from Carla to Bruno
    svg = bt.glue_data(PAGE)["fig-worked-graph"]["data"]["image/svg+xml"]
    assert f"<!-- {W_[C, B]:.3f} -->" in svg and f"<!-- {W_[B, C]:.3f} -->" in svg


@pytest.mark.build
def test_claim_the_weight_matrix_is_not_symmetric():
    np.testing.assert_allclose(S, S.T, rtol=0, atol=0)  # the scores are
    gap = np.abs(W - W.T)
    assert glued("asym_max") == pytest.approx(gap.max(), abs=1e-15) and gap.max() > 0.1
    # The most lopsided pair is Carla–Bruno, and the direction is the one the page states.
    assert {*np.unravel_index(gap.argmax(), gap.shape)} == {C, B}
    assert glued("w_cb") == pytest.approx(W[C, B]) and glued("w_bc") == pytest.approx(W[B, C])
    assert W[C, B] > W[B, C]
    assert glued("w_ca") == pytest.approx(W[C, A]) and W[C, A] > W[A, C]
    assert glued("n_pairs") == 6


@pytest.mark.build
def test_eq_worked_asymmetry_row_normalisers():
    Z = np.exp(S).sum(axis=1)
    np.testing.assert_allclose(W / W.T, Z[None, :] / Z[:, None], rtol=1e-13)
    assert glued("z_bruno") == pytest.approx(Z[B]) and Z.argmax() == B
    assert glued("z_carla") == pytest.approx(Z[C]) and Z.argmin() == C
    assert glued("ratio_cb") == pytest.approx(Z[B] / Z[C], rel=1e-13)
    # The extreme normalisers make the pair with the largest ratio as well as the largest gap.
    ratio = np.maximum(W / W.T, W.T / W)
    assert {*np.unravel_index(ratio.argmax(), ratio.shape)} == {C, B}


@pytest.mark.build
def test_claim_carla_and_ana_spread_their_attention_and_where_it_fails():
    rowmax = W.max(axis=1)
    for name, k in [("carla", C), ("ana", A), ("bruno", B), ("diego", D)]:
        assert glued(f"rowmax_{name}") == pytest.approx(rowmax[k], abs=1e-15)
    assert rowmax[A] < rowmax[C] < rowmax[B] < rowmax[D]
    H = -(W * np.log(W)).sum(axis=1)
    for name, k in [("carla", C), ("ana", A), ("bruno", B), ("diego", D)]:
        assert glued(f"H_{name}") == pytest.approx(H[k], abs=1e-14)
    assert glued("H_uniform") == pytest.approx(math.log(4))
    assert H.argmax() == A and H.argmin() == D
    assert H[C] < H[B]  # the page's caveat: by entropy Carla is a little less spread than Bruno


@pytest.mark.build
def test_claim_carla_and_diego_start_farthest_and_move_most():
    far = np.linalg.norm(X_README - X_README.mean(axis=0), axis=1)
    moved = np.linalg.norm(Y - X_README, axis=1)
    for name, k in [("carla", C), ("ana", A), ("bruno", B), ("diego", D)]:
        assert glued(f"far_{name}") == pytest.approx(far[k], abs=1e-15)
        assert glued(f"move_{name}") == pytest.approx(moved[k], abs=1e-15)
    assert set(np.argsort(far)[-2:]) == {C, D}
    assert set(np.argsort(moved)[-2:]) == {C, D}
    assert far.argmax() == D and moved.argmax() == C  # "the order is swapped"


@pytest.mark.build
def test_claim_ana_starts_central_and_barely_moves():
    far = np.linalg.norm(X_README - X_README.mean(axis=0), axis=1)
    moved = np.linalg.norm(Y - X_README, axis=1)
    assert far.argmin() == A and moved.argmin() == A
    assert glued("ana_move_ratio") == pytest.approx(moved[A] / moved[C])
    assert moved[A] / moved[C] < 0.3  # "about a quarter of Carla's move" (glued, .2f)
    assert moved[A] < 0.5 * np.sort(moved)[1]  # less than half the next smallest move


@pytest.mark.build
def test_everybody_ends_nearer_the_mean_inside_the_hull():
    mean = X_README.mean(axis=0)
    glued_mean = (glued("mean_x1"), glued("mean_x2"))
    np.testing.assert_allclose(glued_mean, mean)
    ratio = np.linalg.norm(Y - mean, axis=1) / np.linalg.norm(X_README - mean, axis=1)
    assert glued("max_after_ratio") == pytest.approx(ratio.max()) and ratio.max() < 1
    # "that largest share is kept by the one who starts farthest out"
    far = np.linalg.norm(X_README - mean, axis=1)
    assert bt.glued_plain(PAGE, "max_after_who").strip("'") == we.PEOPLE[ratio.argmax()]
    assert ratio.argmax() == far.argmax()
    # "The hull is a triangle, Carla, Bruno and Diego at its corners, Ana on its side from Bruno to
    # Diego; every output strictly inside": barycentric coordinates in the triangle, all positive.
    np.testing.assert_array_equal(X_README[A], (X_README[B] + X_README[D]) / 2)
    corners = np.vstack([X_README[[C, B, D]].T, np.ones((1, 3))])  # (3, 3)
    assert abs(np.linalg.det(corners)) > 0.5  # a proper triangle
    lam = np.linalg.solve(corners, np.vstack([Y.T, np.ones((1, 4))]))  # (3, n)
    assert (lam > 1e-3).all()
    # Each y_i is a convex combination of the x_j: positive weights that sum to one.
    assert (W > 0).all()
    np.testing.assert_allclose(W.sum(axis=1), 1, rtol=0, atol=1e-15)


@pytest.mark.build
def test_the_attention_graph_is_complete_with_self_loops():
    assert glued("n_edges") == 16 and glued("n_loops") == 4
    sent = W.sum(axis=0)  # the weight on the arrows leaving each person
    assert glued("out_bruno") == pytest.approx(sent[B]) and sent.argmax() == B
    assert glued("out_carla") == pytest.approx(sent[C]) and sent.argmin() == C


@pytest.mark.build
def test_path_graph_paragraph():
    A_path = we.path_adjacency()
    assert glued("n_path_edges") == 3
    assert set(np.flatnonzero(A_path[A])) == {C, B}  # Ana aggregated only Carla and Bruno
    assert A_path[A, D] == 0
    assert glued("w_ad") == pytest.approx(W[A, D]) and W[A, D] > W[A, C]


# --- Tables: rendered from the arrays -------------------------------------------------------------

def _by_person(rows) -> dict[str, np.ndarray]:
    """{person: her row}, in the order of the article's matrices."""
    return {name: np.asarray(rows[k]) for k, name in enumerate(we.PEOPLE)}


@pytest.mark.build
def test_tables_show_the_arrays():
    bt.assert_table_shows(bt.glued_table(PAGE, "tab-scores"), _by_person(S))
    bt.assert_table_shows(bt.glued_table(PAGE, "tab-weights"), _by_person(W))
    shown = bt.glued_table(PAGE, "tab-embeddings")
    assert {name: [int(c) for c in cells] for name, cells in shown.items()} == \
        {name: row.tolist() for name, row in _by_person(X_README).items()}
    assert list(shown) == list(we.PEOPLE)


@pytest.mark.build
def test_movement_table_shows_inputs_outputs_and_distances():
    mean = X_README.mean(axis=0)
    table = bt.glued_table(PAGE, "tab-movement")
    assert list(table) == list(we.PEOPLE)
    for k, name in enumerate(we.PEOPLE):
        x, y = table[name][:2]
        assert x == f"({X_README[k, 0]:g}, {X_README[k, 1]:g})"
        assert y == f"({Y[k, 0]:.3f}, {Y[k, 1]:.3f})"
    distances = {name: np.array([np.linalg.norm(X_README[k] - mean), np.linalg.norm(Y[k] - mean),
                                 np.linalg.norm(Y[k] - X_README[k])])  # before, after, moved
                 for k, name in enumerate(we.PEOPLE)}
    bt.assert_table_shows({name: cells[2:] for name, cells in table.items()}, distances)


@pytest.mark.build
def test_claims_table_has_exact_form_decimal_and_the_article():
    rows = bt.glued_rows(PAGE, "tab-claims")
    expected = [S[B, B], S[D, D], W[A, C], W[B, B], W[D, D]]
    article = [1.414, 1.414, 0.141, 0.449, 0.539]  # what the article prints
    assert [row[0] for row in rows] == ["score Bruno → Bruno", "score Diego → Diego", "weight Ana → Carla",
                                        "weight Bruno → Bruno", "weight Diego → Diego"]
    for cells, x, a in zip(rows, expected, article, strict=True):
        assert cells[1].startswith("$") and cells[1].endswith("$")
        assert float(cells[2]) == pytest.approx(x, abs=5e-7)
        assert float(cells[3]) == a == round(x, 3)
    assert rows[2][1] == r"$\frac{1}{1 + 3 e^{\frac{\sqrt{2}}{2}}}$"  # 1/(1 + 3e^{1/√2})


@pytest.mark.build
def test_asymmetry_table_is_sorted_by_gap():
    """Each pair once, i before j in the article's order, with W_ij, W_ji, the gap and Z_j/Z_i recomputed
    here; the largest gap first."""
    Z = np.exp(S).sum(axis=1)  # (4,)
    rows = bt.glued_rows(PAGE, "tab-asymmetry")
    pairs = [(we.PEOPLE.index(cells[0]), we.PEOPLE.index(cells[1])) for cells in rows]
    assert sorted(pairs) == [(i, j) for i in range(4) for j in range(i + 1, 4)]
    for (i, j), cells in zip(pairs, rows):
        shown = [float(c) for c in cells[2:]]
        np.testing.assert_allclose(shown, [W[i, j], W[j, i], W[i, j] - W[j, i], Z[j] / Z[i]], rtol=0,
                                   atol=5e-4 + 1e-12, err_msg=cells)
    gaps = [abs(float(cells[4])) for cells in rows]
    assert gaps == sorted(gaps, reverse=True)
    assert gaps[0] == pytest.approx(np.abs(W - W.T).max(), abs=5e-4)


# --- Recovering the lost inputs -------------------------------------------------------------------

def _random_orthogonal(rng):
    Q, R = np.linalg.qr(rng.standard_normal((2, 2)))
    return Q * np.sign(np.diag(R))


@pytest.mark.build
def test_thm_worked_rotation_invariance():
    rng = np.random.default_rng(123)
    for _ in range(5):
        Q = _random_orthogonal(rng)
        for R in (Q, Q @ np.diag([1.0, -1.0])):  # a rotation and a reflection
            S2, W2, Y2 = independent_layer(X_README @ R)
            np.testing.assert_allclose(W2, W, rtol=0, atol=1e-14)
            np.testing.assert_allclose(Y2, Y @ R, rtol=0, atol=1e-14)
            Y3, graph = we.attention_layer(X_README @ R)
            np.testing.assert_allclose(graph.W, W, rtol=0, atol=1e-14)
    assert recovered("rot_dW") < 1e-14 and recovered("rot_dY") < 1e-14
    theta = np.random.default_rng(int(recovered("rot_seed"))).uniform(0, 2 * np.pi)
    assert recovered("rot_degrees") == pytest.approx(np.degrees(theta))
    assert bt.verified("thm-worked-rotation-invariance") > 0


def _gram(g, h, t):
    return np.array([[t * t / (h - g), 0, t, -t], [0, g, g, g], [t, g, h, 2 * g - h],
                     [-t, g, 2 * g - h, h]], dtype=float)


def _corners(f, *ranges):
    values = [f(*corner) for corner in itertools.product(*ranges)]
    return min(values), max(values)


def test_eq_worked_gram_plane_matches_coordinates():
    rng = np.random.default_rng(5)
    for _ in range(10):
        g, beta, c = rng.uniform(0.2, 2.0, 3)
        Xc = np.array([[0, c], [np.sqrt(g), 0], [np.sqrt(g), beta], [np.sqrt(g), -beta]])
        np.testing.assert_allclose(Xc @ Xc.T, _gram(g, g + beta**2, beta * c), rtol=1e-12)


@pytest.mark.build
def test_thm_worked_gram_recovered():
    half = 0.0005  # the article rounds to three decimals
    w_ac, w_bb, w_dd, s = (0.141 + np.array([-half, half]), 0.449 + np.array([-half, half]),
                           0.539 + np.array([-half, half]), 1.414 + np.array([-half, half]))
    r2 = math.sqrt(2)

    def g_of(w):
        return r2 * math.log((1 - w) / (3 * w))

    def rest(w, g, h):
        return math.exp(h / r2) * (1 - w) / w - math.exp(g / r2) - math.exp((2 * g - h) / r2)

    g_rng = _corners(g_of, w_ac)
    h_rng = (r2 * s[0], r2 * s[1])
    tb_rng = _corners(lambda w, g, h: r2 * math.log(rest(w, g, h)), w_bb, g_rng, h_rng)
    td_rng = _corners(lambda w, g, h: -r2 * math.log(rest(w, g, h)), w_dd, g_rng, h_rng)
    t_rng = (max(tb_rng[0], td_rng[0]), min(tb_rng[1], td_rng[1]))
    # Each range holds exactly one whole number: g = 1, h = 2, t = 1 ...
    for (lo, hi), whole in [(g_rng, 1), (h_rng, 2), (tb_rng, 1), (td_rng, 1), (t_rng, 1)]:
        assert [k for k in range(-5, 6) if lo <= k <= hi] == [whole]
    # ... the page's interval-arithmetic bounds contain these ranges and are as tight ...
    for key, (lo, hi) in [("g", g_rng), ("h", h_rng), ("t_bruno", tb_rng), ("t_diego", td_rng)]:
        assert recovered(f"lo_{key}") <= lo + 1e-12 and recovered(f"hi_{key}") >= hi - 1e-12
        assert (hi - lo) > 0.9 * (recovered(f"hi_{key}") - recovered(f"lo_{key}")) - 0.01
    # ... the values at the printed numbers agree ...
    assert recovered("at_g") == pytest.approx(g_of(0.141))
    assert recovered("at_t_bruno") == pytest.approx(r2 * math.log(rest(0.449, g_of(0.141), r2 * 1.414)))
    assert recovered("at_t_diego") == pytest.approx(-r2 * math.log(rest(0.539, g_of(0.141), r2 * 1.414)))
    # ... and the whole-number Gram matrix is the example's.
    np.testing.assert_array_equal(_gram(1, 2, 1), X_README @ X_README.T)
    assert bt.verified("thm-worked-gram-recovered") > 0


def test_the_recovery_check_fails_on_other_published_numbers(monkeypatch):
    """A wrong printed self-weight for Bruno (0.5) confines t to an interval with no whole number."""
    altered = tuple(p if p[:3] != ("W", "Bruno", "Bruno") else ("W", "Bruno", "Bruno", 0.5)
                    for p in we.PUBLISHED)
    monkeypatch.setattr(we, "PUBLISHED", altered)
    with pytest.raises(registry.DerivationError, match="thm-worked-gram-recovered"):
        registry.verify("thm-worked-gram-recovered")


def test_the_recovery_check_fails_on_other_embeddings(monkeypatch):
    """Vectors twice as long keep every exact statement but not the printed numbers."""
    monkeypatch.setattr(we, "embeddings", lambda: X_README * 2)
    with pytest.raises(registry.DerivationError, match="thm-worked-gram-recovered"):
        registry.verify("thm-worked-gram-recovered")


def test_the_score_check_fails_on_a_wrong_scale(monkeypatch):
    monkeypatch.setattr(we, "scaled_scores", lambda Q, K: np.asarray(Q) @ np.asarray(K).T)
    with pytest.raises(registry.DerivationError, match="eq-worked-scores"):
        registry.verify("eq-worked-scores")


def _independent_search(values):
    """Every (Carla, Ana, Bruno, Diego) with entries in values matching the five printed numbers."""
    vecs = np.array(list(itertools.product(values, values)), dtype=float)
    n = len(vecs)
    idx = np.indices((n, n, n, n)).reshape(4, -1).T
    found = []
    for chunk in np.array_split(idx, 16):
        X = vecs[chunk]  # (m, 4, 2)
        Sx = np.einsum("mid,mjd->mij", X, X) / math.sqrt(2)
        Wx = oracles.softmax(Sx)
        ok = ((np.round(Sx[:, B, B], 3) == 1.414) & (np.round(Sx[:, D, D], 3) == 1.414)
              & (np.round(Wx[:, A, C], 3) == 0.141) & (np.round(Wx[:, B, B], 3) == 0.449)
              & (np.round(Wx[:, D, D], 3) == 0.539))
        found.extend(X[ok])
    return np.array(found)


@pytest.mark.build
def test_integer_search_finds_one_gram_matrix():
    mine = _independent_search(range(-2, 3))
    pkg = we.integer_search(range(-2, 3))
    assert sorted(map(lambda M: M.tobytes(), mine)) == sorted(map(lambda M: M.tobytes(), pkg))
    grams = {tuple((M @ M.T).ravel()) for M in mine}
    assert grams == {tuple((X_README @ X_README.T).ravel())}
    # Every match is X_README turned or reflected by a symmetry of the square grid.
    symmetries = [np.array(P, dtype=float) * signs for P in ([[1, 0], [0, 1]], [[0, 1], [1, 0]])
                  for signs in itertools.product((1, -1), repeat=2)]
    assert all(any(np.array_equal(X_README @ Q, M) for Q in symmetries) for M in mine)
    assert recovered("n_candidates") == 5**8
    assert recovered("n_matches") == len(mine) == 8
    assert recovered("n_grams") == len(grams) == 1
    assert recovered("n_turned") == recovered("n_symmetries") == 8


# --- The exact forms -------------------------------------------------------------------------------

def test_exact_weights_agree_with_numpy():
    z = math.exp(1 / math.sqrt(2))
    exact = np.array(we.exact_weights(in_u=True).subs(we.z, z).evalf(20).tolist(), dtype=float)
    np.testing.assert_allclose(exact, W, rtol=0, atol=1e-15)
    assert abs(float(we.exact_weights()[B, B]) - W[B, B]) < 1e-15
    for label in ("eq-worked-scores", "eq-worked-weights", "eq-worked-weights-ana", "eq-worked-weight-ana-carla",
                  "eq-worked-asymmetry", "eq-worked-gram-plane", "eq-worked-recover-g",
                  "eq-worked-recover-t-bruno", "eq-worked-recover-t-diego"):
        assert bt.verified(label) > 0


# --- Figures --------------------------------------------------------------------------------------

@pytest.mark.build
@pytest.mark.parametrize("name", ["fig-worked-heatmap", "fig-worked-graph", "fig-worked-plane"])
def test_figures_render_with_alt_text_caption_and_reference(name):
    html = (paths.HTML / "book" / f"{PAGE}.html").read_text()
    block = re.search(rf'<figure[^>]*id="{name}"[^>]*>(.*?)</figure>', html, re.S)
    assert block, f"{name} is not a figure in the HTML"
    img = re.search(r'<img[^>]*alt="([^"]+)"[^>]*src="([^"]+)"|<img[^>]*src="([^"]+)"[^>]*alt="([^"]+)"',
                    block.group(1))
    assert img, f"{name} has no image with alt text"
    assert "<figcaption" in block.group(1)
    assert f'href="#{name}"' in html  # referenced with {numref}
    assert bt.glue_data(PAGE)[name]["data"].get("image/svg+xml", "").lstrip().startswith("<?xml")


# --- Bad input ------------------------------------------------------------------------------------

@pytest.mark.parametrize("call, error, message", [
    (lambda: we.index("Eve"), ValueError, "name must be one of"),
    (lambda: we.attention_layer(np.ones((3, 2))), ValueError, "one row per person"),
    (lambda: we.attention_layer(np.ones(4)), ValueError, "X must be a 2-d array"),
    (lambda: we.integer_search([0.5, 1.0]), TypeError, "integers"),
    (lambda: we.integer_search([]), TypeError, "non-empty"),
    (lambda: we.integer_search([1, 1]), ValueError, "distinct"),
    (lambda: we.integer_search(range(8)), ValueError, "at most 7"),
    (lambda: we.published_values(np.ones((3, 3)), np.ones((4, 4))), ValueError, "S must have shape"),
    (lambda: we.orthogonal_between(np.ones((4, 2)), np.ones((4, 2))), ValueError, "rank 2"),
    (lambda: we.orthogonal_between(np.ones((4, 2)), np.ones((3, 2))), ValueError, "shape"),
    (lambda: rotation(float("nan")), ValueError, "theta"),
    (lambda: we.displacement(np.ones((4, 2)), np.ones((4, 3))), ValueError, "same shape"),
    (lambda: we.row_normalisers([[1e6, 0.0], [0.0, 0.0]]), ValueError, "overflowed"),
    (lambda: we.asymmetry_pairs(np.ones((2, 3))), ValueError, "square"),
    (lambda: we.row_entropy([[-0.5, 1.5]]), ValueError, "non-negative"),
    (lambda: tables.markdown_table(np.ones((2, 2)), ["a"], ["b", "c"]), ValueError, "labels"),
    (lambda: we.recovery_intervals(0), ValueError, "decimals"),
    (lambda: tables.movement_table(np.ones((4, 2)), np.ones((4, 2)), ["a"]), ValueError, "labels"),
    (lambda: plot_plane_movement(np.ones((4, 2)), np.ones((4, 3)), we.PEOPLE), ValueError, "shape"),
    (lambda: plot_plane_movement(np.ones((4, 2)), np.ones((4, 2)), ["a"]), ValueError, "labels"),
])
def test_bad_input_is_refused_with_a_clear_error(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_orthogonal_between_finds_rotations_and_refuses_stretches():
    R = rotation(0.7)
    np.testing.assert_allclose(we.orthogonal_between(X_README, X_README @ R), R, atol=1e-12)
    assert we.orthogonal_between(X_README, 2 * X_README) is None


def test_plot_attention_graph_arrows_run_from_j_to_i_labelled_near_i():
    """The arrow of W[i, j] leaves j and arrives at i (the way v_j flows); its label sits near i."""
    from matplotlib.patches import FancyArrowPatch

    from attention_graph.plots import circle_layout

    _, graph = we.attention_layer()
    pos = circle_layout(graph.n)
    fig = plot_attention_graph(graph, show_weights=True)
    texts = [t.get_text() for t in fig.axes[0].texts]
    for _i, _j, w in graph.edges():
        assert f"{w:.3f}" in texts
    arrows = [p for p in fig.axes[0].patches if isinstance(p, FancyArrowPatch)]
    pairs = [(i, j) for i, j, _w in graph.edges() if i != j]
    assert len(arrows) == len(pairs)
    for arrow, (i, j) in zip(arrows, pairs):
        start, end = arrow._posA_posB  # the arrow's tail and head, in data coordinates
        assert np.linalg.norm(np.subtract(start, pos[j])) < np.linalg.norm(np.subtract(start, pos[i]))
        assert np.linalg.norm(np.subtract(end, pos[i])) < np.linalg.norm(np.subtract(end, pos[j]))
    ana = we.PEOPLE.index("Ana")
    fig = plot_attention_graph(graph, show_weights=True, highlight=ana, key=False)  # the legend has labels too
    labels = [t.get_text() for t in fig.axes[0].texts if t.get_text() not in we.PEOPLE]
    assert sorted(labels) == sorted(f"{w:.3f}" for w in graph.W[ana])  # only the messages into Ana
    with pytest.raises(ValueError, match="pos must have shape"):
        plot_attention_graph(graph, pos=np.zeros((3, 2)))


# --- "Other sources say": a token's score with itself is always the highest ------------------------

@pytest.mark.build
def test_other_sources_self_score_box():
    X = oracles.X_WORKED  # Carla, Ana, Bruno, Diego
    S = X @ X.T / np.sqrt(2)
    carla = S[0, 0] - max(S[0, 1:])
    ana = S[1, 1] - max(S[1, [0, 2, 3]])
    assert bt.glued_float("worked_example", "margin_carla") == pytest.approx(carla, abs=1e-15)
    assert bt.glued_float("worked_example", "margin_ana") == pytest.approx(ana, abs=1e-15)
    assert carla == 0 and ana == 0  # "ties, not wins"
    assert bt.glued_plain("worked_example", "margin_words").strip("'") == "0.000 each"
    K = X[:, ::-1]  # W_K swaps the coordinates
    Ssw = X @ K.T / np.sqrt(2)
    not_top = sum(Ssw[i, i] < max(Ssw[i, j] for j in range(4) if j != i) for i in range(4))
    assert bt.glued_float("worked_example", "n_self_not_top_swap") == not_top
    assert Ssw[3, 3] == Ssw[3].min() and list(Ssw[3]).count(Ssw[3].min()) == 1  # Diego: the lowest
    assert bt.glued_float("worked_example", "diego_self_swap") == pytest.approx(Ssw[3, 3], rel=1e-12)
    assert bt.glued_float("worked_example", "diego_max_swap") == pytest.approx(Ssw[3].max(), rel=1e-12)


# --- Exercises -------------------------------------------------------------------------------------

@pytest.mark.build
def test_exercise_twins_share_their_weights():
    X2 = X_README.copy()
    X2[D] = X_README[B]
    _, W2, _ = independent_layer(X2)
    assert glued("ex_twins_bb") == pytest.approx(W2[B, B], abs=1e-15)
    assert glued("ex_twins_bd") == pytest.approx(W2[B, D], abs=1e-15)
    assert glued("ex_twins_bb") == glued("ex_twins_bd")  # "the same"
    assert bt.glued_plain(PAGE, "ex_twins_rows_equal") == "True"
    assert glued("w_bb") != glued("w_dd")


@pytest.mark.build
def test_exercise_temperature_raises_anas_weight_on_carla():
    S = X_README @ X_README.T / math.sqrt(2)
    got = [glued(f"ex_tau_{k}") for k in ("half", "one", "two")]
    for value, tau in zip(got, (0.5, 1.0, 2.0)):
        e = np.exp(S[A] / tau)
        assert value == pytest.approx(e[C] / e.sum(), abs=1e-15)
        assert np.argmin(e) == C  # the smallest weight of Ana's row
    assert got[0] < got[1] < got[2] < 1 / 4  # rises toward a quarter


@pytest.mark.build
def test_exercise_entropy_of_the_rows():
    _, W, _ = independent_layer(X_README)
    H = -(W * np.log(W)).sum(axis=1)
    names = ["Carla", "Ana", "Bruno", "Diego"]
    assert bt.glued_plain(PAGE, "ex_entropy_most").strip("'") == names[int(np.argmax(H))]
    assert bt.glued_plain(PAGE, "ex_entropy_least").strip("'") == names[int(np.argmin(H))]
    assert int(np.argmin(H)) == np.unravel_index(np.argmax(W), W.shape)[0]  # the largest weight
    assert glued("ex_entropy_max") == pytest.approx(H.max(), abs=1e-14)
    assert glued("ex_entropy_uniform") == pytest.approx(math.log(4), abs=1e-15)


@pytest.mark.build
def test_the_page_glues_the_worked_explorables_state():
    import json

    html = bt.glue_data("worked_example")["explore-worked"]["data"]["text/html"]
    state = json.loads(re.search(r"<script[^>]*>(.*)</script>", html, re.S).group(1))
    assert state["labels"] == list(we.PEOPLE) and np.array_equal(state["X"], we.embeddings())


# --- Broken variants ------------------------------------------------------------------------------

gr = importlib.import_module("attention_graph.graph")


def after(fn, change):
    """``fn`` followed by ``change`` applied to its result (``fn`` is the original, bound now)."""
    return lambda *args, **kwargs: change(fn(*args, **kwargs))


def _transposed_graph(result):
    Y, graph = result
    return Y, gr.AttentionGraph(graph.W.T, graph.labels)


# label: (module, name, wrong value, what is broken); gathered by tests/test_can_fail.py
BROKEN = {
    # worked example
    "eq-worked-scores": (we, "scaled_scores", lambda Q, K: np.asarray(Q) @ np.asarray(K).T, "no 1/√d"),
    "eq-worked-weights": (we, "attention_layer", after(we.attention_layer, _transposed_graph),
                          "W transposed"),
    "eq-worked-weight-ana-carla": (we, "attention_layer", after(we.attention_layer, _transposed_graph),
                                   "W transposed"),
    "eq-worked-weights-ana": (we, "attention_layer", after(we.attention_layer, _transposed_graph),
                              "W transposed: Ana's column for her row"),
    "eq-worked-asymmetry": (we, "row_normalisers", after(we.row_normalisers, lambda Z: Z[::-1]),
                            "normalisers in reverse order"),
    "thm-worked-rotation-invariance": (we, "rotation", lambda theta: np.array([[1.0, 0.5], [0.0, 1.0]]),
                                       "a shear, not a rotation"),
    "eq-worked-gram-plane": (we, "gram_in_plane", after(we.gram_in_plane, lambda G: G.subs(we.t, 2 * we.t)),
                             "the cross term doubled"),
    "eq-worked-recover-g": (we, "g_from_ana", after(we.g_from_ana, lambda e: e + 1), "g off by one"),
    "eq-worked-recover-t-bruno": (we, "t_from_bruno", after(we.t_from_bruno, lambda e: 2 * e),
                                  "t doubled"),
    "eq-worked-recover-t-diego": (we, "t_from_diego", after(we.t_from_diego, lambda e: 2 * e),
                                  "t doubled"),
    "thm-worked-gram-recovered": (we, "PUBLISHED", tuple(
        p if p[:3] != ("W", "Bruno", "Bruno") else ("W", "Bruno", "Bruno", 0.5) for p in we.PUBLISHED),
        "another printed self-weight for Bruno"),
}
