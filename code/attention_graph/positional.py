"""Positions from the graph: Laplacian eigenvectors as positional encodings.

Attention is permutation equivariant: it cannot tell nodes apart by where they sit. A Graph
Transformer injects position through the eigenvectors of the graph Laplacian (Dwivedi & Bresson).
On the cycle graph, the wrapped-around sequence, those eigenvectors are sines and cosines of the
position; the chapter ``book/positional.md`` derives it, and the checks are registered here.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from .registry import derivation, evaluate
from .validation import as_int, as_matrix, as_square

# The chapter's public names: attention_graph re-exports them (its API, documented in book/api.md,
# with bad-input rows in the tests); the other helpers are imported from this module by name.
__all__ = ["laplacian_pe", "normalized_laplacian"]


def normalized_laplacian(A) -> np.ndarray:
    """L = I − D^{-1/2} A D^{-1/2} of a symmetric, non-negative adjacency A  (eq-normalized-laplacian).

    Isolated nodes (degree 0) get a row and column of the identity. Shape (n, n).

    >>> normalized_laplacian([[0, 1], [1, 0]])
    array([[ 1., -1.],
           [-1.,  1.]])
    """
    A = as_square(A, "A")  # (n, n)
    if (A < 0).any():
        raise ValueError("A must be non-negative")
    if not np.allclose(A, A.T, rtol=0, atol=1e-12):
        raise ValueError("A must be symmetric (an undirected graph) "
                         "for its Laplacian eigenvectors")
    return _normalized_laplacian(A)  # (n, n)


def _normalized_laplacian(A: np.ndarray) -> np.ndarray:
    """L = I − D^{-1/2} A D^{-1/2} of a symmetric, non-negative adjacency A  (eq-normalized-laplacian)."""
    deg = A.sum(axis=1)  # (n,)
    safe = np.where(deg > 0, deg, 1.0)  # (n,)
    inv_sqrt = np.where(deg > 0, 1.0 / np.sqrt(safe), 0.0)  # (n,)
    return np.eye(A.shape[0]) - inv_sqrt[:, None] * A * inv_sqrt[None, :]  # (n, n)


def laplacian_pe(A, k: int) -> np.ndarray:
    """The k eigenvectors of L after the first, by increasing eigenvalue, as columns. Shape (n, k).

    An eigenvector is defined only up to its sign; the sign is fixed so that the entry of largest
    magnitude of each column (the first such entry on ties) is positive, so the encoding is
    deterministic. Within a repeated eigenvalue the basis is whatever ``numpy.linalg.eigh`` returns.
    """
    L = normalized_laplacian(A)  # (n, n)
    n = L.shape[0]
    k = as_int(k, "k", high=n - 1, what=f"an integer from 1 to n - 1 = {n - 1}")
    return _laplacian_pe(L, k)  # (n, k)


def _laplacian_pe(L: np.ndarray, k: int) -> np.ndarray:
    """The k eigenvectors of L after the first, by increasing eigenvalue, as columns. Shape (n, k)."""
    _, vectors = np.linalg.eigh(L)  # (n,), (n, n), eigenvalues ascending
    P = vectors[:, 1:k + 1]  # (n, k)
    pivot = np.argmax(np.abs(P) > np.abs(P).max(axis=0) - 1e-12, axis=0)  # (k,)
    signs = np.sign(P[pivot, np.arange(k)])  # (k,)
    return P * signs  # (n, k)


def cycle_adjacency(n: int) -> np.ndarray:
    """A of the cycle graph C_n: node k is joined to k − 1 and k + 1 (mod n). Shape (n, n).

    >>> cycle_adjacency(4).astype(int)
    array([[0, 1, 0, 1],
           [1, 0, 1, 0],
           [0, 1, 0, 1],
           [1, 0, 1, 0]])
    """
    n = as_int(n, "n", low=3, what="an integer >= 3 (a cycle needs three nodes)")
    k = np.arange(n)  # (n,)
    A = np.zeros((n, n))  # (n, n)
    A[k, (k + 1) % n] = A[(k + 1) % n, k] = 1.0
    return A


def fourier_modes(n: int, chi: int) -> np.ndarray:
    """u^cos_j = cos(2π χ j / n) and u^sin_j = sin(2π χ j / n) for j = 0..n−1, as two columns. Shape (n, 2)."""
    theta = 2 * np.pi * chi * np.arange(n) / n  # (n,)
    return np.column_stack([np.cos(theta), np.sin(theta)])  # (n, 2)


def cycle_eigenvalue(n: int, chi: int) -> float:
    """λ_χ = 1 − cos(2π χ / n), the eigenvalue of the χ-th Fourier mode on C_n  (thm-cycle-fourier)."""
    return float(1 - np.cos(2 * np.pi * chi / n))


def fourier_coefficients(v, chi: int) -> tuple[float, float]:
    """(ψ₁, ψ₂) of the least-squares fit v_j ≈ ψ₁ cos(2π χ j / n) + ψ₂ sin(2π χ j / n), n = len(v)."""
    v = np.asarray(v, dtype=float)  # (n,)
    B = fourier_modes(v.size, chi)  # (n, 2)
    (psi_1, psi_2), *_ = np.linalg.lstsq(B, v, rcond=None)
    return float(psi_1), float(psi_2)


def fourier_frequency(v) -> int:
    """The χ in 0..n//2 whose two modes cos(2π χ j / n), sin(2π χ j / n) capture most of v."""
    v = np.asarray(v, dtype=float)  # (n,)
    energy = [np.linalg.lstsq(fourier_modes(v.size, chi), v, rcond=None)[0] for chi in range(v.size // 2 + 1)]
    captured = [float(np.linalg.norm(fourier_modes(v.size, chi) @ ab)) for chi, ab in enumerate(energy)]
    return int(np.argmax(captured))


def fit_sinusoids(P) -> tuple[list[int], list[tuple[float, float]], float]:
    """For each column of P (n, k): its frequency χ, its (ψ₁, ψ₂), and the largest misfit over all.

    Column c is fitted as ψ₁ cos(2π χ j / n) + ψ₂ sin(2π χ j / n) with χ = ``fourier_frequency``.
    """
    P = as_matrix(P, "P", shape_doc="(n, k)")  # (n, k)
    freqs = [fourier_frequency(P[:, c]) for c in range(P.shape[1])]
    coefs = [fourier_coefficients(P[:, c], chi) for c, chi in enumerate(freqs)]
    fits = [fourier_modes(P.shape[0], chi) @ np.array(ab) for chi, ab in zip(freqs, coefs)]  # k × (n,)
    misfit = max(float(np.abs(P[:, c] - f).max()) for c, f in enumerate(fits))
    return freqs, coefs, misfit


def cycle_mode_residual(n: int) -> float:
    """max over χ and j of |L u^cos − λ_χ u^cos| and |L u^sin − λ_χ u^sin| on C_n, with the package's L."""
    L = normalized_laplacian(cycle_adjacency(n))  # (n, n)
    return max(float(np.abs(L @ fourier_modes(n, chi) - cycle_eigenvalue(n, chi) * fourier_modes(n, chi)).max())
               for chi in range(n))


def path_adjacency_n(n: int) -> np.ndarray:
    """A of the path graph P_n: node k is joined to k − 1 and k + 1 (no wrap-around). Shape (n, n).

    >>> path_adjacency_n(3).astype(int)
    array([[0, 1, 0],
           [1, 0, 1],
           [0, 1, 0]])
    """
    n = as_int(n, "n", low=2, what="an integer >= 2 (a path needs two nodes)")
    k = np.arange(n - 1)  # (n − 1,)
    A = np.zeros((n, n))  # (n, n)
    A[k, k + 1] = A[k + 1, k] = 1.0
    return A


def path_modes(n: int) -> tuple[np.ndarray, np.ndarray]:
    """λ_χ = 1 − cos θ_χ and the unit vectors u_χ ∝ √d_j cos(θ_χ j), θ_χ = π χ/(n − 1)  (thm-path-cosines).

    Returns (λ of shape (n,), V of shape (n, n), column χ = u_χ), χ = 0..n−1 by increasing λ.
    """
    A = path_adjacency_n(n)  # (n, n)
    theta = np.pi * np.arange(n) / (n - 1)  # (n,), one angle per mode χ
    V = np.sqrt(A.sum(axis=1))[:, None] * np.cos(np.outer(np.arange(n), theta))  # (n, n)
    return 1 - np.cos(theta), V / np.linalg.norm(V, axis=0)  # (n,), (n, n)


def path_mode_residual(n: int) -> float:
    """max over χ of |L u_χ − λ_χ u_χ| on the path P_n, with the package's L  (thm-path-cosines)."""
    lam, V = path_modes(n)  # (n,), (n, n)
    return float(np.abs(normalized_laplacian(path_adjacency_n(n)) @ V - V * lam).max())


def span_residual(P, B) -> float:
    """max |B − P Pᵀ B|: how far the columns of B are from the span of the orthonormal columns of P."""
    P = as_matrix(P, "P", shape_doc="(n, k)")  # (n, k)
    B = as_matrix(B, "B", shape_doc="(n, r)")  # (n, r)
    return float(np.abs(B - P @ (P.T @ B)).max())


def permutation_equivariance_gap(A, k: int, perm) -> np.ndarray:
    """Per column, max |PE(A permuted) − PE(A) permuted|: 0 where the encoding follows a relabelling.

    ``perm[a]`` is the old index of the node that gets new index a. A column whose entry is about 2×
    its largest magnitude came out with the opposite sign. Shape (k,).
    """
    A = as_matrix(A, "A", shape_doc="(n, n)")  # (n, n)
    perm = np.asarray(perm)  # (n,)
    if sorted(perm.tolist()) != list(range(A.shape[0])):
        raise ValueError(f"perm must be a permutation of 0..{A.shape[0] - 1}")
    P_perm = laplacian_pe(A[np.ix_(perm, perm)], k)  # (n, k)
    return np.abs(P_perm - laplacian_pe(A, k)[perm]).max(axis=0)  # (k,)


# --------------------------------------------------------------------------------------------------
# The derivations, in SymPy
# --------------------------------------------------------------------------------------------------
_n = sp.Symbol("n", integer=True, positive=True)
_L, _A, _D = (sp.MatrixSymbol(x, _n, _n) for x in (r"\mathcal{L}", "A", "D"))
_ONE = sp.MatrixSymbol(r"\mathbf{1}", _n, 1)
_I = sp.MatrixSymbol("I", _n, _n)


def _display_normalized_laplacian():
    D_half = sp.MatPow(_D, sp.Rational(-1, 2))
    return sp.Eq(_L, sp.MatAdd(_I, -sp.MatMul(D_half, _A, D_half, evaluate=False),
                               evaluate=False), evaluate=False)


def _laplacian_kernel_display():
    return sp.Eq(sp.MatMul(_L, sp.MatPow(_D, sp.Rational(1, 2)), _ONE, evaluate=False),
                 sp.ZeroMatrix(_n, 1), evaluate=False)


def _symbolic_graph():
    """A weighted triangle with symbolic positive weights, its degrees and its Laplacian, exactly."""
    a, b, c = sp.symbols("a b c", positive=True)
    A = sp.Matrix([[0, a, b], [a, 0, c], [b, c, 0]])
    deg = [sum(A.row(r)) for r in range(3)]
    D_inv_half = sp.diag(*[1 / sp.sqrt(x) for x in deg])
    return A, deg, sp.eye(3) - D_inv_half * A * D_inv_half


@derivation("eq-normalized-laplacian", display=_display_normalized_laplacian,
            strength="verified", scope="for a symbolic weighted triangle and the path on 4 nodes")
def _check_normalized_laplacian():
    # The matrix formula is the entrywise one: L_ij = δ_ij − A_ij / √(d_i d_j).
    A, deg, L = _symbolic_graph()
    entrywise = sp.Matrix(3, 3, lambda r, c: sp.KroneckerDelta(r, c) - A[r, c] / sp.sqrt(deg[r] * deg[c]))
    yield sp.Eq(L, entrywise, evaluate=False)
    # ... and the displayed matrix formula, computed, is that Laplacian.
    shown = evaluate(_display_normalized_laplacian().rhs, {_A: A, _D: sp.diag(*deg), _I: sp.eye(3), _n: 3})
    yield sp.Eq(shown, L, evaluate=False)
    # The package's floats equal the exact Laplacian of the path on four nodes.
    P4 = sp.Matrix(4, 4, lambda r, c: 1 if abs(r - c) == 1 else 0)
    d4 = [sum(P4.row(r)) for r in range(4)]
    exact = sp.eye(4) - sp.diag(*[1 / sp.sqrt(x) for x in d4]) * P4 * sp.diag(*[1 / sp.sqrt(x) for x in d4])
    got = normalized_laplacian(np.array(P4.tolist(), dtype=float))  # (4, 4)
    yield bool(np.allclose(np.array(exact.evalf(30), dtype=float), got, rtol=0, atol=1e-15))


@derivation("eq-laplacian-kernel",
            display=lambda: _laplacian_kernel_display(),
            strength="proved", scope=("for every n, D and A of symbolic shape with A 1 = D 1 (the degrees; "
                                      "no isolated node); also on a symbolic weighted triangle"))
def _check_laplacian_kernel():
    # In general: put the displayed L = I − D^{-1/2} A D^{-1/2} into the displayed L D^{1/2} 1; it is
    # D^{1/2} 1 − D^{-1/2} A 1, and A 1 = D 1 (the degrees) makes it D^{1/2} 1 − D^{1/2} 1 = 0.
    shown = _laplacian_kernel_display()
    L_shown = _display_normalized_laplacian().rhs.subs(_I, sp.Identity(_n))  # I: the identity
    expanded = sp.expand(shown.lhs.subs(_L, L_shown)).doit()
    with_degrees = expanded.subs(sp.MatMul(_A, _ONE), sp.MatMul(_D, _ONE))
    yield sp.Eq(with_degrees, shown.rhs, evaluate=False)
    # L D^{1/2} 1 = D^{1/2} 1 − D^{-1/2} A 1 = D^{1/2} 1 − D^{-1/2} d = 0, on the symbolic triangle.
    A, deg, L = _symbolic_graph()
    shown = _laplacian_kernel_display()
    values = {_L: L, _D: sp.diag(*deg), _ONE: sp.ones(3, 1), _n: 3}
    yield sp.Eq(evaluate(shown.lhs, values), sp.zeros(3, 1), evaluate=False)
    # ... and numerically: the package's L has smallest eigenvalue 0 with eigenvector ∝ √degree.
    A5 = cycle_adjacency(5)  # (5, 5)
    A5[0, 2] = A5[2, 0] = 1.0  # a chord, so the degrees differ
    values, vectors = np.linalg.eigh(normalized_laplacian(A5))  # (5,), (5, 5)
    root = np.sqrt(A5.sum(axis=1))  # (5,)
    yield bool(abs(values[0]) < 1e-12 and span_residual(vectors[:, :1], root[:, None] / np.linalg.norm(root)) < 1e-12)


def _check_cycle_rows():
    """Row j of L on the cycle: (L u)_j = u_j − (u_{j−1} + u_{j+1}) / 2; each mode satisfies it."""
    j, chi = sp.symbols("j chi", integer=True)
    theta = 2 * sp.pi * chi / _n
    lam = 1 - sp.cos(theta)
    for mode in (sp.cos, sp.sin):
        u = lambda kk, mode=mode: mode(theta * kk)  # noqa: E731
        yield sp.Eq(sp.expand_trig(u(j) - (u(j - 1) + u(j + 1)) / 2), sp.expand_trig(lam * u(j)))
        # The wrap-around: with χ an integer the mode has period n, so rows 0 and n−1 need no special case.
        yield sp.Eq(u(j + _n), u(j))


@derivation("thm-path-cosines",
            strength="proved", scope="for every n ≥ 2 and every integer χ (rows for symbolic j, both ends)")
def _check_path_cosines():
    # Nodes 0..N of the path (N = n − 1 edges), θ = π χ / N, û_j = cos(θ j). Rows of the random-walk
    # Laplacian I − D⁻¹A: inside, degree 2; at both ends, degree 1.
    N = sp.Symbol("N", integer=True, positive=True)
    j, chi = sp.symbols("j chi", integer=True)
    theta = sp.pi * chi / N
    lam = 1 - sp.cos(theta)

    def u_hat(kk):
        return sp.cos(sp.expand(theta * kk))

    rows = {"interior": (u_hat(j) - (u_hat(j - 1) + u_hat(j + 1)) / 2, u_hat(j)),
            "first": (u_hat(0) - u_hat(1), u_hat(0)),
            "last": (u_hat(N) - u_hat(N - 1), u_hat(N))}
    for got, entry in rows.values():
        yield sp.Eq(sp.expand_trig(got - lam * entry), 0, evaluate=False)  # simplified by the registry
    # The eigenvalues 1 − cos θ_χ increase strictly with θ_χ = π χ/(n − 1) ∈ [0, π]: their derivative,
    # sin θ, is positive on (0, π) (SymPy finds no point of (0, π) where it is <= 0), so they are distinct.
    x = sp.Symbol("x", real=True)
    yield sp.solveset(sp.diff(1 - sp.cos(x), x) <= 0, x, sp.Interval.open(0, sp.pi)) == sp.S.EmptySet
    # So L_rw û = λ û. The proof's first step, for a general n × n degree matrix D and adjacency A:
    # D^{1/2} (I − D⁻¹A) D^{-1/2} is the normalised Laplacian, so L u = λ u for u = D^{1/2} û.
    D_half, D_inv_half = sp.MatPow(_D, sp.Rational(1, 2)), sp.MatPow(_D, sp.Rational(-1, 2))
    L_rw = sp.MatAdd(sp.Identity(_n), -sp.MatMul(sp.MatPow(_D, -1), _A))
    yield sp.Eq(sp.MatMul(D_half, L_rw, D_inv_half),
                sp.MatAdd(sp.Identity(_n), -sp.MatMul(D_inv_half, _A, D_inv_half)), evaluate=False)
    # Then exactly on the paths of 4 and 5 nodes, for every χ, with L from its definition.
    for n in (4, 5):
        A = sp.Matrix(n, n, lambda r, c: 1 if abs(r - c) == 1 else 0)
        deg = [sum(A.row(r)) for r in range(n)]
        L = sp.eye(n) - sp.diag(*[1 / sp.sqrt(x) for x in deg]) * A * sp.diag(*[1 / sp.sqrt(x) for x in deg])
        for mm in range(n):
            th = sp.pi * mm / (n - 1)
            u = sp.Matrix([sp.sqrt(deg[r]) * sp.cos(th * r) for r in range(n)])
            yield sp.Eq(sp.simplify(L * u - (1 - sp.cos(th)) * u), sp.zeros(n, 1))
    # The package's Laplacian of a longer path, numerically.
    yield path_mode_residual(12) < 1e-12


@derivation("thm-cycle-fourier",
            strength="proved", scope="for every n ≥ 3 and every integer χ (row by row, symbolic j)")
def _check_cycle_fourier():
    yield from _check_cycle_rows()
    # Exactly, on C_6: L u^cos = λ u^cos and L u^sin = λ u^sin for every χ, with L from the definition.
    n = 6
    A = sp.Matrix(n, n, lambda r, c: 1 if (r - c) % n in (1, n - 1) else 0)
    D_inv_half = sp.diag(*[1 / sp.sqrt(sum(A.row(r))) for r in range(n)])
    L = sp.eye(n) - D_inv_half * A * D_inv_half  # the definition; every degree is 2, so it is I − A/2
    for chi in range(n):
        lam = 1 - sp.cos(2 * sp.pi * chi / n)
        for mode in (sp.cos, sp.sin):
            v = sp.Matrix([mode(2 * sp.pi * chi * kk / n) for kk in range(n)])
            yield sp.Eq(L * v, lam * v, evaluate=False)
    # Numerically, with the package's Laplacian on C_16.
    yield cycle_mode_residual(16) < 1e-12
