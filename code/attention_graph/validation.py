"""Input checks shared by every public function.

Each check either returns a clean array or raises an error that names the argument, says what was
expected and what arrived. Nothing here uses ``assert``: the checks must survive ``python -O``.

Conventions (documented in the API page and tested in ``tests/test_validation.py``):

* integer and boolean arrays where floats are expected are converted to float64;
* float32 stays float32 and float64 stays float64 (a mix computes in float64);
* complex, object, string and other non-numeric arrays raise ``TypeError``;
* NaN or infinity raises ``ValueError`` with the position of the first offending entry, except
  −∞ in the scores of the softmax family (:func:`as_scores`), which is a masked entry.
"""

from __future__ import annotations

import numpy as np

__all__ = ["as_matrix", "as_scores", "as_square", "as_mask", "as_edges", "as_qkv", "as_int", "as_rng",
           "check_same"]
__all__ += ["as_bias"]


def _float_dtype(x: np.ndarray, name: str) -> np.dtype:
    """The float dtype an array is computed in, or a TypeError naming ``name``."""
    kind = x.dtype.kind
    if kind == "f":
        return x.dtype if x.dtype in (np.float32, np.float64) else np.dtype(np.float64)
    if kind in "biu":
        return np.dtype(np.float64)
    raise TypeError(
        f"{name} must hold real numbers; got dtype {x.dtype} "
        f"({'complex' if kind == 'c' else 'not numeric'})"
    )


def as_matrix(x, name: str, *, shape_doc: str = "(n, d)", masked_ok: bool = False) -> np.ndarray:
    """Return ``x`` as a finite 2-d float array, or raise naming ``name``.

    With ``masked_ok``, −∞ is allowed too (a masked score, see :func:`as_scores`); +∞ and NaN are not.

    >>> as_matrix([[1, 2]], "Q")
    array([[1., 2.]])
    >>> as_matrix([1, 2], "Q")
    Traceback (most recent call last):
    ...
    ValueError: Q must be a 2-d array of shape (n, d); got shape (2,)
    """
    try:
        arr = np.asarray(x)
    except ValueError as err:  # ragged nested lists
        raise ValueError(f"{name} must be a rectangular 2-d array; {err}") from None
    dtype = _float_dtype(arr, name)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-d array of shape {shape_doc}; got shape {arr.shape}")
    arr = arr.astype(dtype, copy=False)
    bad = ~np.isfinite(arr)
    if masked_ok:
        bad &= arr != -np.inf
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        allowed = " or -inf (a masked entry)" if masked_ok else ""
        raise ValueError(
            f"{name} must be finite{allowed}; found {arr[where]} at index {where} "
            f"({int(bad.sum())} non-finite entries in all)"
        )
    return arr


def as_square(x, name: str, *, note: str = "") -> np.ndarray:
    """Return ``x`` as a finite square (n, n) float array, or raise naming ``name``.

    >>> as_square([[1, 2], [3, 4]], "A").shape
    (2, 2)
    >>> as_square([[1, 2]], "A")
    Traceback (most recent call last):
    ...
    ValueError: A must be square (n, n); got shape (1, 2)
    """
    M = as_matrix(x, name, shape_doc="(n, n)")  # (n, n)
    if M.shape[0] != M.shape[1]:
        raise ValueError(f"{name} must be square (n, n){note}; got shape {M.shape}")
    return M


def as_int(value, name: str, *, low: int = 1, high: int | None = None, what: str | None = None) -> int:
    """``value`` as a Python int in [low, high]: a TypeError if it is no integer, else a ValueError.

    Booleans are refused (``True`` is no count). ``what`` overrides the description in the message.

    >>> as_int(np.int64(3), "n")
    3
    >>> as_int(0, "n")
    Traceback (most recent call last):
    ...
    ValueError: n must be a positive integer; got 0
    """
    if what is None:
        what = ("a positive integer" if (low, high) == (1, None) else
                f"an integer >= {low}" if high is None else f"an integer from {low} to {high}")
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be {what}; got {value!r} of type {type(value).__name__}")
    if value < low or (high is not None and value > high):
        raise ValueError(f"{name} must be {what}; got {value!r}")
    return int(value)


def as_rng(rng, name: str = "rng") -> np.random.Generator:
    """``rng`` if it is a ``numpy.random.Generator`` (``np.random.default_rng(seed)``), else a TypeError."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"{name} must be a numpy.random.Generator (np.random.default_rng(seed)); "
                        f"got {type(rng).__name__}")
    return rng


def as_scores(S, mask=None, name: str = "S") -> tuple[np.ndarray, np.ndarray]:
    """Return (S, allowed): scores (n_q, n_k) as floats, and True where query i may attend to key j.

    A key is allowed where ``mask`` (boolean, optional) is True and S_ij is not −∞: a score of −∞
    is a masked entry, the way PyTorch code writes masks, and the limit that the masked softmax is
    (thm-masked-softmax-neighbours). +∞ and NaN are refused, and so is a row that allows no key.

    >>> as_scores([[0.0, -np.inf]])[1]
    array([[ True, False]])
    >>> as_scores([[-np.inf, -np.inf]])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: S allows no key in row(s) [0]: every entry is -inf (masked), and a query with no key ...
    """
    S = as_matrix(S, name, shape_doc="(n_q, n_k)", masked_ok=True)  # (n_q, n_k)
    if S.shape[1] == 0 and S.shape[0] > 0:
        raise ValueError(f"{name} has no columns: a query with no key to attend to has no softmax")
    allowed = S > -np.inf  # (n_q, n_k)
    if mask is not None:
        allowed &= as_mask(mask, "mask", S.shape)  # (n_q, n_k)
    empty = ~allowed.any(axis=1)  # (n_q,)
    if empty.any():
        rows = np.flatnonzero(empty)
        how = "-inf (masked)" if mask is None else "-inf or masked by mask"
        raise ValueError(
            f"{name} allows no key in row(s) {rows[:10].tolist()}: every entry is {how}, and a query "
            "with no key to attend to has no softmax"
        )
    return S, allowed


def as_mask(mask, name: str, shape: tuple[int, int]) -> np.ndarray:
    """Return ``mask`` as a boolean array of ``shape`` whose every row allows at least one key.

    A boolean mask is True where query i may attend to key j. Integer masks are refused: an additive
    mask (0 and -inf) and a 0/1 mask look alike, and guessing between them gives wrong answers.
    """
    arr = np.asarray(mask)
    if arr.dtype != np.bool_:
        raise TypeError(
            f"{name} must be a boolean array (True where query i may attend to key j); "
            f"got dtype {arr.dtype}. Convert a 0/1 mask with {name}.astype(bool)."
        )
    if arr.shape != tuple(shape):
        raise ValueError(f"{name} must have shape {tuple(shape)} (n_q, n_k); got shape {arr.shape}")
    empty = ~arr.any(axis=1)  # (n_q,)
    if empty.any():
        rows = np.flatnonzero(empty)
        raise ValueError(
            f"{name} allows no key in row(s) {rows[:10].tolist()}: every query must attend to at "
            "least one key (an empty row has no softmax; a NaN would follow)"
        )
    return arr


def as_edges(edges, name: str, n_q: int, n_k: int) -> np.ndarray:
    """Return ``edges`` as an int64 array of shape (E, 2) with rows (i, j), 0 <= i < n_q, 0 <= j < n_k."""
    arr = np.asarray(edges)
    if arr.size == 0 and arr.ndim <= 2:
        arr = arr.reshape(0, 2)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{name} must be an integer array of shape (E, 2); got dtype {arr.dtype}")
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise ValueError(f"{name} must have shape (E, 2) with rows (i, j); got shape {arr.shape}")
    arr = arr.astype(np.int64, copy=False)
    for col, (who, limit) in enumerate((("query index i", n_q), ("key index j", n_k))):
        c = arr[:, col]  # (E,)
        bad = (c < 0) | (c >= limit)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"{name}[{row}] has {who} = {int(c[row])}, outside 0..{limit - 1}"
            )
    return arr


def as_qkv(Q, K, V) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Q (n_q, d), K (n_k, d), V (n_k, d_v) as finite float arrays of one dtype, or a clear error.

    >>> [a.dtype for a in as_qkv([[1, 0]], [[1.0, 2.0]], [[3]])]
    [dtype('float64'), dtype('float64'), dtype('float64')]
    """
    Q = as_matrix(Q, "Q", shape_doc="(n_q, d)")  # (n_q, d)
    K = as_matrix(K, "K", shape_doc="(n_k, d)")  # (n_k, d)
    V = as_matrix(V, "V", shape_doc="(n_k, d_v)")  # (n_k, d_v)
    check_same(Q.shape[1], K.shape[1], "Q and K must share the dimension d (columns)")
    check_same(K.shape[0], V.shape[0], "K and V must have the same number of rows (n_k)")
    if Q.shape[1] == 0:
        raise ValueError("Q and K have d = 0 columns: the scale 1/√d is undefined")
    dtype = np.result_type(Q, K, V)
    return Q.astype(dtype, copy=False), K.astype(dtype, copy=False), V.astype(dtype, copy=False)


def check_same(a: int, b: int, what: str) -> None:
    """Raise ``ValueError(what)`` with both sizes when ``a != b``."""
    if a != b:
        raise ValueError(f"{what}: {a} != {b}")



def as_bias(bias, shape: tuple[int, int], name: str = "bias") -> np.ndarray:
    """Return an additive bias B (n_q, n_k) for the scores, or raise naming ``name``.

    As PyTorch's float ``attn_mask``: B is added to the scaled scores, and −∞ is a masked entry.
    Entries must be finite or −∞ (+∞ and NaN are refused), and every row must leave at least one
    key. A boolean array is refused: a boolean mask belongs in ``mask``, True where attending is
    allowed, and added as a number it would mean the opposite.

    >>> as_bias([[0.0, -np.inf]], (1, 2))
    array([[  0., -inf]])
    """
    arr = np.asarray(bias)
    if arr.dtype == np.bool_:
        raise TypeError(f"{name} must be a float array added to the scores; got a boolean array. "
                        "Pass a boolean mask as mask= (True where query i may attend to key j).")
    B = as_matrix(arr, name, shape_doc="(n_q, n_k)", masked_ok=True)  # (n_q, n_k)
    if B.shape != tuple(shape):
        raise ValueError(f"{name} must have shape {tuple(shape)} (n_q, n_k), one entry per score; "
                         f"got shape {B.shape}")
    empty = ~(B > -np.inf).any(axis=1) if B.shape[1] else np.zeros(B.shape[0], dtype=bool)  # (n_q,)
    if empty.any():
        rows = np.flatnonzero(empty)
        raise ValueError(f"{name} is -inf in every entry of row(s) {rows[:10].tolist()}: it masks every "
                         "key, and a query with no key to attend to has no softmax")
    return B
