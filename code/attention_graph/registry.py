"""The registry of SymPy checks behind every labeled equation and theorem of the book.

Each entry is keyed by the label the book uses (``eq-scaled-scores``, ``thm-rows-sum-to-one``). Its
*check* returns the statements that must hold: SymPy equations (``Eq``), other SymPy relations or
booleans, or Python booleans (for a comparison of the package's float output with an exact value).
Its optional *display* returns the SymPy object the book glues as the equation itself.

Every concept module registers its checks when it is imported, and ``attention_graph/__init__.py``
imports every concept module, so the registry is complete as soon as the package is imported.

``tests/test_integrity.py`` fails when a label in the book has no entry, when an entry's label is not
in the book, or when a check does not hold.

>>> import sympy as sp
>>> x = sp.Symbol("x")
>>> verify_statements([sp.Eq((x + 1) ** 2, x**2 + 2 * x + 1, evaluate=False)])
1
>>> verify_statements([sp.Eq(x + 1, x, evaluate=False)])
Traceback (most recent call last):
...
attention_graph.registry.DerivationError: statement 0 does not hold: Eq(x + 1, x)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
import sympy as sp
from sympy.printing.latex import LatexPrinter

__all__ = ["Derivation", "DerivationError", "STRENGTHS", "badge", "close_to_exact", "derivation", "display",
           "evaluate", "is_general", "labels", "latex", "math", "strength", "strength_counts", "verify",
           "verify_statements",
           "symbol_matrix"]
__all__ += ["glue"]
__all__ += ["Steps"]


class DerivationError(AssertionError):
    """A registered SymPy statement does not hold."""


# How strongly a check establishes its statement, strongest first. The scope says for what:
# "proved" (symbolic, general symbols; scope says what is general), "verified" (exact, for the sizes
# or distributions the scope names), "measured" (floating point, the scope names the tolerance).
STRENGTHS = {
    "proved": "Proved in SymPy",
    "verified": "Verified exactly",
    "measured": "Measured",
}


@dataclass(frozen=True)
class Derivation:
    label: str
    check: Callable[[], Iterable]
    display: Callable[[], sp.Basic] | None = None
    strength: str = "verified"
    scope: str = ""
    lines: bool = False  # printed on several lines (``_broken_latex``), to fit a phone's column


_REGISTRY: dict[str, Derivation] = {}


def derivation(label: str, display: Callable[[], sp.Basic] | None = None, *, strength: str, scope: str,
               lines: bool = False):
    """Register the decorated function as the check behind ``label``.

    ``strength`` is one of ``STRENGTHS`` and ``scope`` says for what it holds: what is general for
    "proved", the sizes or distributions for "verified", the tolerance for "measured". ``lines``: the
    display is too wide for a phone's column on one line, and is printed on several
    (``_broken_latex``); the object stays one.
    """
    if strength not in STRENGTHS:
        raise ValueError(f"strength of {label!r} must be one of {sorted(STRENGTHS)}; got {strength!r}")
    if not scope.strip():
        raise ValueError(f"{label!r}: say for what the check holds (scope)")
    first = STRENGTHS[strength].split()[-1].lower()  # "exactly" of "Verified exactly", ...
    if scope.split()[0].strip(",").lower() == first:
        raise ValueError(f"{label!r}: the badge already says {STRENGTHS[strength]!r}; the scope "
                         f"must not repeat {first!r}")

    def register(check: Callable[[], Iterable]) -> Callable[[], Iterable]:
        if label in _REGISTRY:
            raise ValueError(f"label {label!r} is registered twice")
        _REGISTRY[label] = Derivation(label, check, display, strength, scope.strip(), lines)
        return check

    return register


def strength(label: str) -> tuple[str, str]:
    """(strength, scope) of the check under ``label``."""
    entry = _REGISTRY.get(label)
    if entry is None:
        raise KeyError(f"no SymPy check registered under label {label!r}")
    return entry.strength, entry.scope


def badge(label: str) -> str:
    """The line the book shows under a result: "Verified exactly for n = 2, 3." and the like."""
    kind, scope = strength(label)
    return f"{STRENGTHS[kind]} {scope}."


def how_checked(labels) -> dict[str, str]:
    """{glue key: badge line} of a page's "How this page is checked" box, the key ``how_`` + the label
    with ``_`` for ``-``.

    >>> from attention_graph import qkv, registry  # qkv registers its checks
    >>> list(registry.how_checked(["eq-qkv"]))
    ['how_eq_qkv']
    """
    return {f"how_{label.replace('-', '_')}": badge(label) for label in labels}


def strength_counts() -> dict[str, int]:
    """How many registered results are proved, verified and measured."""
    counts = {kind: 0 for kind in STRENGTHS}
    for entry in _REGISTRY.values():
        counts[entry.strength] += 1
    return counts


def labels() -> list[str]:
    """Every registered label, sorted."""
    return sorted(_REGISTRY)


def display(label: str) -> sp.Basic:
    """The SymPy object the book glues under ``label``."""
    entry = _REGISTRY.get(label)
    if entry is None or entry.display is None:
        raise KeyError(f"no SymPy display registered under label {label!r}")
    return entry.display()


class Steps(sp.Tuple):
    """A display in named steps, ``name = expression`` one to a line, each name used by the steps after it.

    A long nested formula reads better as the steps that build it. The display stays one SymPy
    object: ``composed()`` puts each step's expression in place of its name in the steps after it,
    which gives the one equation the steps say (the last name = the nested expression), and ``lhs``
    and ``rhs`` are that equation's, so a check compares the displayed formula itself.

    >>> X, Xp, Y = sp.symbols("X X' Y")
    >>> f = sp.Function("f")
    >>> Steps(sp.Eq(Xp, f(X), evaluate=False), sp.Eq(Y, Xp + f(Xp), evaluate=False)).rhs
    f(X) + f(f(X))
    """

    def __new__(cls, *steps):
        if not steps:
            raise ValueError("Steps needs at least one equation")
        for step in steps:
            if not (isinstance(step, sp.Eq) and isinstance(step.lhs, sp.Symbol)):
                raise TypeError(f"each step must be Eq(name, expression) with a Symbol name; got {step!r}")
        return super().__new__(cls, *steps)

    def composed(self) -> sp.Eq:
        """The last step with every earlier name replaced by its expression: one nested equation."""
        *earlier, last = self.args
        rhs = last.rhs
        for step in reversed(earlier):
            rhs = rhs.subs(step.lhs, step.rhs)
        return sp.Eq(last.lhs, rhs, evaluate=False)

    @property
    def lhs(self):
        return self.args[-1].lhs

    @property
    def rhs(self):
        return self.composed().rhs


def symbol_matrix(name: str, rows: int, cols: int) -> sp.Matrix:
    """A rows × cols matrix of real symbols ``name_rc``, for exact checks on small cases."""
    return sp.Matrix(rows, cols, lambda r, c: sp.Symbol(f"{name}_{r}{c}", real=True))


def evaluate(expr, values: dict):
    """A displayed matrix expression, computed: each symbol of ``values`` replaced by its value.

    ``values`` maps matrix symbols to explicit matrices and scalar symbols to numbers or symbols;
    products, sums, powers, transposes, block matrices and ``softmax`` rows are then carried out
    exactly, so a check compares the displayed formula itself with what it claims.

    >>> n = sp.Symbol("n")
    >>> A, B = sp.MatrixSymbol("A", n, n), sp.MatrixSymbol("B", n, n)
    >>> evaluate(A * B.T, {A: sp.Matrix([[1, 2], [0, 1]]), B: sp.eye(2), n: 2})
    Matrix([
    [1, 2],
    [0, 1]])
    """
    mats = {k: v for k, v in values.items() if isinstance(k, sp.MatrixSymbol)}
    scalars = {k: v for k, v in values.items() if not isinstance(k, sp.MatrixSymbol)}

    def ev(x):
        if isinstance(x, sp.MatrixSymbol):
            if x not in mats:
                raise KeyError(f"no value for the matrix symbol {x}")
            return sp.Matrix(mats[x])
        if isinstance(x, sp.MatrixBase):
            return sp.Matrix(x).subs(scalars)
        if isinstance(x, sp.MatMul):
            factors = [ev(f) for f in x.args]
            out = factors[0]
            for f in factors[1:]:
                out = out * f
            return out
        if isinstance(x, sp.MatAdd):
            terms = [ev(t) for t in x.args]
            return sum(terms[1:], terms[0])
        if isinstance(x, sp.MatPow):
            return ev(x.base) ** sp.sympify(x.exp).subs(scalars)
        if isinstance(x, sp.Transpose):
            return ev(x.arg).T
        if isinstance(x, sp.BlockMatrix):
            return sp.Matrix.vstack(*[sp.Matrix.hstack(*[ev(b) for b in row])
                                      for row in x.blocks.tolist()])
        if isinstance(x, (sp.Identity, sp.ZeroMatrix)):
            return sp.Matrix(x.subs(scalars).as_explicit())
        if getattr(x, "is_Matrix", False) and x.args and hasattr(x, "doit"):  # softmax rows and the like
            return type(x)(*[ev(a) if getattr(a, "is_Matrix", False) else a for a in x.args]).doit()
        return sp.sympify(x).subs(scalars)

    return ev(expr)


def close_to_exact(exact, got, *, atol: float = 0.0, rtol: float = 0.0, reshape: bool = False) -> bool:
    """The package's floats ``got`` equal the exact SymPy values (evaluated to 30 digits).

    Shapes must match; with ``reshape`` the exact values are read in the shape of ``got`` when they
    hold as many entries (a SymPy row for a NumPy vector). A mismatch fails, never broadcasts.
    """
    want = np.array(sp.Matrix(exact).evalf(30), dtype=float)
    got = np.asarray(got, dtype=float)
    if reshape and want.size == got.size:
        want = want.reshape(got.shape)
    return bool(want.shape == got.shape and np.allclose(got, want, rtol=rtol, atol=atol))


def sample_point(expr) -> dict | None:
    """Values for the free symbols of ``expr`` that satisfy each symbol's assumptions, or None."""
    point = {}
    for k, x in enumerate(sorted(expr.free_symbols, key=str)):
        if not isinstance(x, sp.Symbol):
            return None  # an Indexed entry or the like: no point is chosen
        value = sp.Integer(k % 3 + 2) if x.is_integer else sp.Rational(7 + 2 * k, 5 + k)
        value = -value if x.is_negative or x.is_nonpositive else value
        if any(getattr(value, f"is_{name}") is not held
               for name, held in x.assumptions0.items() if held is not None and hasattr(value, f"is_{name}")):
            return None
        point[x] = value
    return point


def clearly_nonzero(expr) -> bool:
    """True when ``expr`` is nonzero at a point allowed by its symbols' assumptions.

    An identity is zero at every allowed point, so this only speeds up the refutation of a false
    statement (SymPy's ``simplify`` can take seconds to give up on one); it never proves anything.
    """
    point = sample_point(expr)
    if point is None:
        return False
    try:
        value = expr.subs(point).doit().evalf(50)
    except (TypeError, ValueError, ZeroDivisionError):  # pragma: no cover - fall back to simplify
        return False
    return bool(value.is_number and value.is_finite and abs(value) > 1e-30)


def _is_zero(expr) -> bool:
    expr = sp.expand(expr.doit())
    if isinstance(expr, sp.MatrixExpr):  # matrix symbols of symbolic shape: zero when it cancels
        return isinstance(sp.expand(sp.simplify(expr)), sp.ZeroMatrix) or sp.expand(expr) == 0
    return not clearly_nonzero(expr) and sp.simplify(expr) == 0


def _holds(statement) -> bool:
    if isinstance(statement, bool):
        return statement
    if isinstance(statement, sp.Equality):
        lhs, rhs = statement.lhs, statement.rhs
        if isinstance(lhs, sp.MatrixBase) or isinstance(rhs, sp.MatrixBase):
            return all(_is_zero(e) for e in sp.Matrix(lhs) - sp.Matrix(rhs))
        return _is_zero(lhs - rhs)
    if isinstance(statement, sp.Basic):
        return sp.simplify(statement.doit()) is sp.true
    raise TypeError(f"a check must return SymPy relations or bools; got {type(statement).__name__}")


_ENTRY = re.compile(r"_\d+$")  # x_01, s_2: an entry of an array of fixed size


def is_general(statement) -> bool:
    """True when ``statement`` holds for general symbols, not only at sizes fixed in advance.

    General: a SymPy relation with a free integer symbol (a size or an index: n, k, l), or a matrix
    symbol of symbolic shape; or a scalar relation in free symbols with no explicit matrix and no
    entry of one (no symbol named like ``x_01``). A Python bool, a relation SymPy has already decided
    (``True``), an explicit matrix or a symbol matrix's entries are not general: they hold at the sizes
    the check chose.

    >>> n = sp.Symbol("n", integer=True, positive=True)
    >>> j, x = sp.Symbol("j", integer=True), sp.IndexedBase("x")
    >>> is_general(sp.Eq(sp.Sum(2 * x[j], (j, 1, n)), 2 * sp.Sum(x[j], (j, 1, n)), evaluate=False))
    True
    >>> X = symbol_matrix("x", 2, 2)
    >>> is_general(sp.Eq(X * sp.eye(2), X, evaluate=False))
    False
    """
    if not isinstance(statement, sp.Basic):
        return False
    free = statement.free_symbols
    if any(getattr(x, "is_integer", False) for x in free):
        return True
    if any(not sp.sympify(size).is_number for m in statement.atoms(sp.MatrixSymbol) for size in m.shape):
        return True
    if statement.atoms(sp.MatrixBase) or any(_ENTRY.search(str(x)) for x in free):
        return False
    return bool(free)


def verify_statements(statements: Iterable, strength: str = "verified") -> int:
    """Check every statement; return how many held, raise ``DerivationError`` on the first failure.

    A check of ``strength`` "proved" must also give at least one general statement
    (``is_general``): a check whose symbols all have fixed sizes cannot register as proved.
    """
    count, general = 0, False
    for k, statement in enumerate(statements):
        if not _holds(statement):
            raise DerivationError(f"statement {k} does not hold: {statement}")
        general = general or is_general(statement)
        count += 1
    if count == 0:
        raise DerivationError("a check returned no statement: it could never fail")
    if strength == "proved" and not general:
        raise DerivationError("registered as proved, but every statement is at fixed sizes "
                              "(no free size or index, no symbolic shape, no general scalar relation)")
    return count


def verify(label: str) -> int:
    """Run the check registered under ``label``; return the number of statements that held."""
    if label not in _REGISTRY:
        raise KeyError(f"no SymPy check registered under label {label!r}")
    try:
        return verify_statements(_REGISTRY[label].check(), _REGISTRY[label].strength)
    except DerivationError as err:
        raise DerivationError(f"{label}: {err}") from None


def math(label: str):
    """The display under ``label`` as ``IPython.display.Math``, factors in the order written.

    This is what the book glues for ``{glue:math}``: the SymPy object, rendered by ``sympy.latex``
    without SymPy's alphabetical reordering of products (so ``q_l k_l`` is not shown as ``k_l q_l``).
    """
    from IPython.display import Math

    return Math(latex(label))


# MyST-NB's glue protocol (``myst_nb.glue``): a display whose metadata names the key, its MIME types
# prefixed when it is not to be shown; MyST-NB reads it from the executed notebook.
GLUE_PREFIX = "application/papermill.record/"


def glue(name: str, value, display: bool = True) -> None:
    """Show ``value`` under ``name``: what a page's ``{glue:text}`name``` pastes.

    Where MyST-NB is installed (the book's build, the ``book`` extra), this writes the display
    ``myst_nb.glue`` writes, so the build reads it; without importing MyST-NB, which the package does
    not need. Elsewhere (a downloaded notebook in plain Jupyter, the ``notebook`` extra) there is no
    build to read it, and the value is shown with its name, ``name = value``, even when
    ``display=False``. The page's code cells are the same in both. A Markdown value (a table) keeps
    its Markdown source as its plain text, so a plain-text view or nbconvert shows the table, not
    ``<IPython.core.display.Markdown object>``; an equation (``Math``) keeps its LaTeX the same way.
    """
    from importlib.util import find_spec

    from IPython.core.formatters import format_display_data
    from IPython.display import display as show

    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty string, not {name!r}")
    bundle, metadata = format_display_data(value)
    if isinstance(bundle.get("text/markdown"), str):
        bundle["text/plain"] = bundle["text/markdown"]
    elif isinstance(bundle.get("text/latex"), str):  # an equation: its LaTeX, not "<...Math object>"
        bundle["text/plain"] = bundle["text/latex"]
    if find_spec("myst_nb") is None:
        if set(bundle) <= {"text/plain"}:
            print(f"{name} = {bundle.get('text/plain', value)}")
        else:
            print(f"{name}:")
            show(bundle, raw=True, metadata=metadata)  # every MIME type: the viewer picks one
        return
    prefix = "" if display else GLUE_PREFIX
    metadata["scrapbook"] = {"name": name, "mime_prefix": prefix}
    show({prefix + k: v for k, v in bundle.items()}, raw=True, metadata=metadata)


class WrittenOrder(LatexPrinter):
    """``sympy.latex`` in the order a person writes: factors as the display builds them
    (``order="none"``), and in a sum the added terms before the subtracted ones, each group as built,
    so ``n - 1``, ``2 g - \\eta`` and ``I - D^{-1} W`` rather than ``-1 + n``, ``-\\eta + 2 g`` and
    ``-D^{-1} W + I``. A transpose is ``^\\top``. A sum over several indices is written as nested
    sums, and ``Subs(e, x, v)`` as "e, with x = v". Only the printing changes: the display stays the
    object the check evaluates.

    >>> n, g, eta = sp.symbols("n g eta")
    >>> print(WrittenOrder({"order": "none"}).doprint(sp.Add(-eta, 2 * g, n - 1)))
    n + 2 g - 1 - \\eta
    """

    def _as_ordered_terms(self, expr, order=None):
        from sympy.core.function import _coeff_isneg

        terms = super()._as_ordered_terms(expr, order=order)
        return [t for t in terms if not _coeff_isneg(t)] + [t for t in terms if _coeff_isneg(t)]

    def _print_Identity(self, expr):
        # The identity is I, as the page writes it, where SymPy's default prints \mathbb{I}.
        return "I"

    def _print_Sum(self, expr):
        if len(expr.limits) == 1 or any(len(limit) != 3 for limit in expr.limits):
            return super()._print_Sum(expr)
        heads = "".join("\\sum_{{{}={}}}^{{{}}} ".format(*(self._print(x) for x in limit)) for limit in expr.limits)
        body = self._print(expr.function)
        return heads + (rf"\left({body}\right)" if isinstance(expr.function, sp.Add) else body)

    def _print_Steps(self, steps):
        lines = (f"{self._print(step.lhs)} &= {self._print(step.rhs)}" for step in steps.args)
        return "\\begin{aligned}" + " \\\\ ".join(lines) + "\\end{aligned}"

    def _print_Transpose(self, expr):
        """A transpose as the pages write it, ``K^\\top``: a bare ``T`` is the number of layers."""
        text = super()._print_Transpose(expr)
        return text[: -len("^{T}")] + "^{\\top}" if text.endswith("^{T}") else text

    def _print_Subs(self, subs):
        expr, old, new = subs.args
        where = ", ".join(f"{self._print(o)} = {self._print(v)}" for o, v in zip(old, new))
        return f"{self._print(expr)}, \\quad \\text{{with}} \\quad {where}"


def _broken_latex(expr: sp.Basic, printer: LatexPrinter | None = None) -> str:
    r"""LaTeX of ``expr`` on several lines (an ``aligned`` block), where a long display reads best broken.

    ``lhs = rhs`` breaks after the ``=`` when ``rhs`` does not break itself; a sum breaks before each
    added or subtracted term, a Hadamard product before each ``\circ``, and a product whose last
    factor is a function of a sum, ``c f(a + b)``, inside the function's parentheses (each later line
    sized to the first by a ``\vphantom``); "e, with x = v" (``Subs``) puts "with" on a line of its
    own, and ``x = v`` on the next. Anything else stays one line. Only the printing changes: the
    object is the one the check reads.

    >>> x, y, z = sp.symbols("x y z")
    >>> print(_broken_latex(sp.Eq(z, x - y, evaluate=False)))
    \begin{aligned} z &= x \\ &\quad - y \end{aligned}
    >>> print(_broken_latex(sp.Eq(z, sp.exp(x) * y, evaluate=False)))
    \begin{aligned} &z \\ &\quad = y e^{x} \end{aligned}
    >>> print(_broken_latex(2 * sp.log(x + y)))
    \begin{aligned} &2 \log\left(x \right. \\ &\quad \left. \vphantom{x} + y\right) \end{aligned}
    >>> print(_broken_latex(sp.Subs(x + z, z, y)))
    \begin{aligned} &x \\ &\quad + z, \\ &\quad \text{with} \\ &\quad z = y \end{aligned}
    """
    p = printer or WrittenOrder({"order": "none"})

    def pieces(e) -> list[str]:
        """``e`` as the lines it breaks into, each after the first starting with its operator."""
        if isinstance(e, sp.Add):
            terms = p._as_ordered_terms(e, order="none")
            return [p._print(terms[0])] + [f"- {p._print(-t)}" if t.could_extract_minus_sign() else
                                          f"+ {p._print(t)}" for t in terms[1:]]
        if isinstance(e, sp.HadamardProduct):
            args = [rf"\left({p._print(a)}\right)" if isinstance(a, (sp.MatAdd, sp.MatMul, sp.Add, sp.Mul))
                    else p._print(a) for a in e.args]
            return [args[0]] + [rf"\circ {a}" for a in args[1:]]
        if isinstance(e, sp.Subs):
            body, old, new = e.args
            where = ", ".join(f"{p._print(o)} = {p._print(v)}" for o, v in zip(old, new))
            *first, last = pieces(body)
            return first + [last + ","] + [r"\text{with}", where]
        if isinstance(e, (sp.Mul, sp.Function)):
            *front, last = e.args if isinstance(e, sp.Mul) else (e,)
            if isinstance(last, sp.Function) and len(last.args) == 1 and isinstance(last.args[0], sp.Add):
                head, tail = p._print(last.func(sp.Symbol("HOLE"))).split("HOLE")
                if head.endswith(r"{\left(") and tail.strip() == r"\right)}":
                    head, tail = head[: -len(r"{\left(")] + r"\left(", r"\right)"
                if head.endswith(r"\left(") and tail.strip() == r"\right)":
                    inner = pieces(last.args[0])
                    lead = (p._print(sp.Mul(*front)) + " ") if front else ""
                    phantom = rf"\vphantom{{{inner[0]}}} "
                    return ([rf"{lead}{head}{inner[0]} \right."]
                            + [rf"\left. {phantom}{r} \right." for r in inner[1:-1]]
                            + [rf"\left. {phantom}{inner[-1]}\right)"])
        return [p._print(e)]

    def rows(e) -> list[str]:
        """``e`` as the rows of the ``aligned`` block, each with the ``&`` where they align."""
        if isinstance(e, sp.Equality):
            first, *rest = pieces(e.rhs)
            if not rest:
                return [f"&{p._print(e.lhs)}", rf"&\quad = {first}"]
            return [f"{p._print(e.lhs)} &= {first}"] + [rf"&\quad {r}" for r in rest]
        first, *rest = pieces(e)
        return [f"&{first}"] + [rf"&\quad {r}" for r in rest]

    return r"\begin{aligned} " + r" \\ ".join(rows(expr)) + r" \end{aligned}"


def latex(label: str) -> str:
    """LaTeX of the display under ``label``, in the order a person writes (``WrittenOrder``); on
    several lines (``_broken_latex``) when the label was registered with ``lines=True``."""
    printer = WrittenOrder({"order": "none"})
    if label in _REGISTRY and _REGISTRY[label].lines:
        return _broken_latex(display(label), printer)
    return printer.doprint(display(label))
