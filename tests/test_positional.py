"""Positions from the graph: the normalized Laplacian, the encoding and its sign, the cycle's Fourier
modes, and what the chapter shows, recomputed with plain NumPy."""

import importlib

import numpy as np
import pytest
import sympy as sp

import attention_graph as ag
import booktools as bt
from attention_graph import laplacian_pe, normalized_laplacian, positional
from attention_graph.worked_example import path_adjacency
from bad_inputs import ok

PAGE = "positional"


def _laplacian(A):
    """I − D^{-1/2} A D^{-1/2}, entry by entry, for a graph without isolated nodes."""
    A = np.asarray(A, dtype=float)
    d = A.sum(axis=1)
    n = len(A)
    return np.array([[(i == j) - A[i, j] / np.sqrt(d[i] * d[j]) for j in range(n)] for i in range(n)])


def test_normalized_laplacian_is_the_entrywise_formula():
    rng = np.random.default_rng(0)
    A = rng.random((6, 6))
    A = A + A.T
    np.fill_diagonal(A, 0)
    np.testing.assert_allclose(normalized_laplacian(A), _laplacian(A), rtol=0, atol=1e-14)


def test_laplacian_spectrum_lies_in_zero_two_with_sqrt_degree_kernel():
    rng = np.random.default_rng(1)
    A = (rng.random((12, 12)) < 0.4).astype(float)
    A = np.triu(A, 1)
    A = A + A.T
    A[0, 1] = A[1, 0] = 1.0
    A = A[A.sum(axis=1) > 0][:, A.sum(axis=1) > 0]
    lam, U = np.linalg.eigh(_laplacian(A))
    assert lam.min() > -1e-12 and lam.max() < 2 + 1e-12
    root = np.sqrt(A.sum(axis=1))
    np.testing.assert_allclose(_laplacian(A) @ root, 0, atol=1e-12)


def test_isolated_node_keeps_a_row_of_the_identity():
    A = np.array([[0, 1, 0], [1, 0, 0], [0, 0, 0]])
    L = normalized_laplacian(A)
    np.testing.assert_array_equal(L[2], [0, 0, 1])


@pytest.mark.parametrize("A, message", [
    (np.ones((2, 3)), "square"),
    (np.array([[0, -1], [-1, 0]]), "non-negative"),
    (np.array([[0, 1], [0, 0]]), "symmetric"),
])
def test_normalized_laplacian_refuses_bad_adjacency(A, message):
    with pytest.raises(ValueError, match=message):
        normalized_laplacian(A)


def test_laplacian_pe_columns_are_sign_fixed_unit_eigenvectors():
    rng = np.random.default_rng(2)
    A = rng.random((8, 8))
    A = A + A.T
    P = laplacian_pe(A, 4)
    L = _laplacian(A)
    lam = np.linalg.eigvalsh(L)[1:5]
    np.testing.assert_allclose(L @ P, P * lam, atol=1e-12)
    np.testing.assert_allclose(P.T @ P, np.eye(4), atol=1e-12)
    for c in range(4):
        biggest = np.flatnonzero(np.abs(P[:, c]) > np.abs(P[:, c]).max() - 1e-12)[0]
        assert P[biggest, c] > 0


@pytest.mark.parametrize("k, error", [(0, ValueError), (4, ValueError), (2.0, TypeError), (True, TypeError)])
def test_laplacian_pe_refuses_bad_k(k, error):
    with pytest.raises(error, match="k must be an integer"):
        laplacian_pe(path_adjacency(), k)


def test_cycle_adjacency_and_errors():
    A = positional.cycle_adjacency(5)
    assert (A.sum(axis=1) == 2).all() and (A == A.T).all() and A[0, 4] == 1 and A[0, 2] == 0
    with pytest.raises(ValueError, match=r"n must be an integer >= 3 \(a cycle needs three nodes\)"):
        positional.cycle_adjacency(2)


# --- The theorem ------------------------------------------------------------------------------------

def test_thm_cycle_fourier():
    """cos and sin of 2π m k / n are eigenvectors of I − A/2 on C_n, eigenvalue 1 − cos(2π m / n)."""
    for n in (3, 4, 7, 12, 25):
        k = np.arange(n)
        A = np.zeros((n, n))
        A[k, (k + 1) % n] = A[(k + 1) % n, k] = 1
        L = np.eye(n) - A / 2
        np.testing.assert_allclose(normalized_laplacian(A), L, atol=1e-15)
        for m in range(-2, n + 2):
            lam = 1 - np.cos(2 * np.pi * m / n)
            for v in (np.cos(2 * np.pi * m * k / n), np.sin(2 * np.pi * m * k / n)):
                np.testing.assert_allclose(L @ v, lam * v, atol=1e-12)
    assert bt.verified("thm-cycle-fourier") >= 1


def test_the_row_identity_is_not_a_tautology():
    """The symbolic statement used by the check is false for a wrong eigenvalue."""
    k, m, n = sp.symbols("k m n", integer=True)
    theta = 2 * sp.pi * m / n
    v = lambda kk: sp.cos(theta * kk)  # noqa: E731
    wrong = sp.expand_trig(v(k) - (v(k - 1) + v(k + 1)) / 2 - (1 + sp.cos(theta)) * v(k))
    assert sp.simplify(wrong) != 0


def test_fourier_fit_helpers():
    n = 10
    k = np.arange(n)
    v = 0.3 * np.cos(2 * np.pi * 3 * k / n) - 0.7 * np.sin(2 * np.pi * 3 * k / n)
    assert positional.fourier_frequency(v) == 3
    np.testing.assert_allclose(positional.fourier_coefficients(v, 3), (0.3, -0.7), atol=1e-14)
    freqs, coefs, misfit = positional.fit_sinusoids(np.column_stack([v, np.cos(2 * np.pi * k / n)]))
    assert freqs == [3, 1] and misfit < 1e-14


def test_the_cycle_figure_says_chi_in_words():
    """The figure comes before χ is defined: each panel's title counts its column's waves round the
    cycle in words, never by the symbol."""
    from attention_graph import plots
    from attention_graph.plots.positional import waves

    plots.use_book_style()
    P = laplacian_pe(positional.cycle_adjacency(16), 4)  # (16, 4)
    freqs, coefs, _ = positional.fit_sinusoids(P)
    fig = plots.plot_cycle_encodings(P, freqs, coefs)
    titles = [ax.get_title() for ax in fig.axes]
    assert titles == ["column 1: one wave", "column 2: one wave", "column 3: two waves", "column 4: two waves"]
    assert "round the cycle" in fig.get_suptitle()
    assert not any("chi" in t or "χ" in t for t in titles + [fig.get_suptitle()])
    assert [waves(k) for k in (0, 1, 3, 12)] == ["no waves", "one wave", "three waves", "12 waves"]


# --- What the page shows ------------------------------------------------------------------------------

@pytest.mark.build
def test_glued_path_eigenvalues():
    lam = np.linalg.eigvalsh(_laplacian(path_adjacency()))
    for r in range(4):
        assert bt.glued_float(PAGE, f"path_lambda_{r}") == pytest.approx(lam[r], abs=1e-12)
    assert bt.glued_float(PAGE, "path_lambda0_abs") < 1e-12
    np.testing.assert_allclose(lam, [0, 0.5, 1.5, 2], atol=1e-12)  # the path's known spectrum


def test_page_claims_about_the_path_encoding():
    """First column decreasing along the path (one sign change), second symmetric (two), third
    alternating (three)."""
    P = laplacian_pe(path_adjacency(), 3)
    assert (np.diff(P[:, 0]) < 0).all()
    assert np.allclose(P[0, 1], P[3, 1]) and np.allclose(P[1, 1], P[2, 1])
    changes = [int((np.diff(np.sign(P[:, c])) != 0).sum()) for c in range(3)]
    assert changes == [1, 2, 3]


@pytest.mark.build
def test_page_sign_flip_claims():
    """Swapping Ana and Carla's numbers changes nothing; reading the path backwards flips columns 1
    and 3 (by twice their largest entry) and keeps column 2."""
    A = path_adjacency()
    P = laplacian_pe(A, 3)
    rev = [3, 2, 1, 0]
    P_rev = laplacian_pe(A[np.ix_(rev, rev)], 3)
    np.testing.assert_allclose(P_rev[:, [0, 2]], -P[rev][:, [0, 2]], atol=1e-12)
    np.testing.assert_allclose(P_rev[:, 1], P[rev][:, 1], atol=1e-12)
    # The flipped columns' largest entries tie, with opposite signs, at mirror-image people:
    # Carla and Diego in column 1, Ana and Bruno in column 3.
    for c, pair in ((0, [0, 3]), (2, [1, 2])):
        big = np.flatnonzero(np.isclose(np.abs(P[:, c]), np.abs(P[:, c]).max(), rtol=0, atol=1e-12))
        assert big.tolist() == pair and P[pair[0], c] == pytest.approx(-P[pair[1], c], abs=1e-12)
    assert bt.glued_plain(PAGE, "reverse_flipped").strip("'") == "1 and 3"
    assert bt.glued_float(PAGE, "reverse_kept") == 2
    assert bt.glued_float(PAGE, "reverse_gap") == pytest.approx(2 * np.abs(P[:, 0]).max(), abs=1e-12)
    assert bt.glued_float(PAGE, "reverse_gap") == pytest.approx(bt.glued_float(PAGE, "reverse_gap_expected"))
    swap = [1, 0, 2, 3]
    P_swap = laplacian_pe(A[np.ix_(swap, swap)], 3)
    np.testing.assert_allclose(P_swap, P[swap], atol=1e-12)
    assert bt.glued_float(PAGE, "swap_gap") < 1e-12


@pytest.mark.build
def test_page_cycle_numbers():
    n, k = int(bt.glued_float(PAGE, "cycle_n")), int(bt.glued_float(PAGE, "cycle_k"))
    idx = np.arange(n)
    A = np.zeros((n, n))
    A[idx, (idx + 1) % n] = A[(idx + 1) % n, idx] = 1
    L = np.eye(n) - A / 2
    residual = max(np.abs(L @ f(2 * np.pi * m * idx / n)
                          - (1 - np.cos(2 * np.pi * m / n)) * f(2 * np.pi * m * idx / n)).max()
                   for m in range(n) for f in (np.cos, np.sin))
    assert bt.glued_float(PAGE, "cycle_mode_residual") < 1e-12 and residual < 1e-12
    # The columns of the encoding: frequencies 1, 1, 2, 2, each a sinusoid of amplitude √(2/n).
    P = laplacian_pe(A, k)
    assert bt.glued_plain(PAGE, "cycle_freqs").strip("'") == "1, 1, 2, 2"
    for c, m in enumerate([1, 1, 2, 2]):
        B = np.column_stack([np.cos(2 * np.pi * m * idx / n), np.sin(2 * np.pi * m * idx / n)])
        ab, *_ = np.linalg.lstsq(B, P[:, c], rcond=None)
        assert np.abs(B @ ab - P[:, c]).max() < 1e-12
        assert np.hypot(*ab) == pytest.approx(np.sqrt(2 / n), rel=1e-12)
    assert bt.glued_float(PAGE, "cycle_fit_residual") < 1e-12
    assert bt.glued_float(PAGE, "cycle_amp_min") == pytest.approx(np.sqrt(2 / n), rel=1e-12)
    assert bt.glued_float(PAGE, "cycle_amp_max") == pytest.approx(np.sqrt(2 / n), rel=1e-12)
    assert bt.glued_float(PAGE, "cycle_amp_theory") == pytest.approx(np.sqrt(2 / n), rel=1e-15)
    # Every column has the same amplitude, and the sentence says so (not "between x and x").
    assert bt.glued_plain(PAGE, "cycle_amp_words").strip("'") == f"equal to {np.sqrt(2 / n):.4f} in every column"


def test_eigenvalues_grow_with_m_up_to_half():
    """The page: 1 − cos(2πm/n) grows with m up to n/2, and m, n − m give the same eigenvalue."""
    for n in (6, 16, 17):
        lam = [positional.cycle_eigenvalue(n, m) for m in range(n)]
        assert all(a < b for a, b in zip(lam[: n // 2 + 1], lam[1: n // 2 + 1]))
        assert all(abs(lam[m] - lam[n - m]) < 1e-15 for m in range(1, n))


def test_permutation_equivariance_gap_refuses_a_non_permutation():
    with pytest.raises(ValueError, match="permutation"):
        positional.permutation_equivariance_gap(path_adjacency(), 2, [0, 0, 1, 2])


# --- Exercises -------------------------------------------------------------------------------------

def _sym_normalized_laplacian(A):
    d = A.sum(axis=1)
    return np.eye(len(A)) - A / np.sqrt(np.outer(d, d))


@pytest.mark.build
def test_exercise_path_spectrum_runs_from_zero_to_two():
    A = np.diag(np.ones(3), 1) + np.diag(np.ones(3), -1)  # the path of four
    lam = np.linalg.eigvalsh(_sym_normalized_laplacian(A))
    assert bt.glued_float("positional", "ex_path_lam_min") < 1e-12
    assert bt.glued_float("positional", "ex_path_lam_max") == pytest.approx(2.0, abs=1e-12)
    assert lam[-1] == pytest.approx(2.0, abs=1e-12)
    v = np.sqrt(A.sum(axis=1)) * np.array([1, -1, 1, -1])  # the kernel's, alternating in sign
    np.testing.assert_allclose(_sym_normalized_laplacian(A) @ v, 2 * v, atol=1e-12)


@pytest.mark.build
def test_exercise_cycle_frequencies_come_in_pairs():
    n = 12
    A = np.roll(np.eye(n), 1, axis=1) + np.roll(np.eye(n), -1, axis=1)
    _, vecs = np.linalg.eigh(_sym_normalized_laplacian(A))
    freqs = [int(np.argmax(np.abs(np.fft.rfft(vecs[:, c])))) for c in range(1, 5)]
    assert bt.glued_plain("positional", "ex_cycle_freqs").strip("'") == ", ".join(map(str, freqs))
    assert freqs == [1, 1, 2, 2]


@pytest.mark.build
def test_exercise_star_has_a_repeated_eigenvalue():
    n = 5
    A = np.zeros((n, n))
    A[0, 1:] = A[1:, 0] = 1
    lam = np.linalg.eigvalsh(_sym_normalized_laplacian(A))
    assert bt.glued_float("positional", "ex_star_multiplicity") == np.sum(np.isclose(lam, 1)) == n - 2
    assert bt.glued_float("positional", "ex_star_leaves") == n - 1
    assert bt.glued_float("positional", "ex_star_lam_max") == pytest.approx(lam[-1]) == pytest.approx(2)
    v = np.array([0, 1, -1, 0, 0.0])  # zero on the centre, summing to zero over the leaves
    np.testing.assert_allclose(_sym_normalized_laplacian(A) @ v, v, atol=1e-12)

@pytest.mark.build
def test_thm_path_cosines():
    assert bt.verified("thm-path-cosines") >= 1
    # Independently: the cosines √d_k cos(π m k/(n − 1)) are eigenvectors of I − D^-1/2 A D^-1/2.
    for n in (2, 4, 7):
        A = np.diag(np.ones(n - 1), 1) + np.diag(np.ones(n - 1), -1)
        d = A.sum(axis=1)
        L = np.eye(n) - A / np.sqrt(np.outer(d, d))
        for m in range(n):
            theta = np.pi * m / (n - 1)
            v = np.sqrt(d) * np.cos(theta * np.arange(n))
            np.testing.assert_allclose(L @ v, (1 - np.cos(theta)) * v, atol=1e-12)
    # The worked example's path: the encoding's columns are the first non-trivial cosine modes.
    P = laplacian_pe(path_adjacency(), 3)
    lam, V = positional.path_modes(4)
    np.testing.assert_allclose(np.abs(P), np.abs(V[:, 1:]), atol=1e-12)
    assert bt.glued_float(PAGE, "path_cosine_dev") < 1e-12
    assert bt.glued_float(PAGE, "path_mode_residual") < 1e-12


# --- Broken variants ------------------------------------------------------------------------------

po = importlib.import_module("attention_graph.positional")


def after(fn, change):
    """``fn`` followed by ``change`` applied to its result (``fn`` is the original, bound now)."""
    return lambda *args, **kwargs: change(fn(*args, **kwargs))


# label: (module, name, wrong value, what is broken); gathered by tests/test_can_fail.py
BROKEN = {
    # positional
    "eq-normalized-laplacian": (po, "normalized_laplacian", lambda A: np.eye(len(A)) - np.asarray(A) / 2,
                                "I − A/2 whatever the degrees"),
    "eq-laplacian-kernel": (po, "normalized_laplacian", lambda A: np.eye(len(A)) - np.asarray(A) / 2,
                            "I − A/2 whatever the degrees"),
    "thm-path-cosines": (po, "path_modes", after(po.path_modes, lambda r: (2 * r[0], r[1])),
                         "eigenvalues 2(1 − cos θ)"),
    "thm-cycle-fourier": (po, "cycle_eigenvalue", lambda n, chi: float(1 + np.cos(2 * np.pi * chi / n)),
                          "1 + cos θ in place of 1 − cos θ"),
}


# --- Bad inputs --------------------------------------------------------------------------------

# (function name, call, error type, message fragment); gathered by tests/test_validation.py
BAD = [
    ("normalized_laplacian", lambda: ag.normalized_laplacian(np.array([[0, 1], [0, 0]])), ValueError, "symmetric"),
    ("normalized_laplacian", lambda: ag.normalized_laplacian(ok), ValueError, "square"),
    ("laplacian_pe", lambda: ag.laplacian_pe(np.array([[0, 1], [1, 0]]), 2), ValueError, "k must be an integer"),
]
