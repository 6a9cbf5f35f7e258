"""The notation page's numbers and exercises (dot products, the orientation, a path), recomputed
independently; the symbol table."""

import collections
import re

import numpy as np
import pytest

import booktools as bt
import mystsource
from attention_graph import notation as table
from attention_graph import worked_example as we

PAGE = "notation"


def _plain(key: str) -> str:
    return bt.glued_plain(PAGE, key).strip("'")


def _exercise(label: str) -> str:
    """The statement of exercise ``label``, as the page's source writes it."""
    text = (bt.BOOK / f"{PAGE}.md").read_text()
    return next("\n".join(line for line in body if not line.startswith(":"))
                for name, _arg, options, body, _start in bt.blocks(text)
                if name == "exercise" and options.get("label") == label)


# The four people, as the page's sentences and exercises read them: X retyped from the seed's table.
X_SEED = np.array([[0, 1], [1, 0], [1, 1], [1, -1]])  # the seed's table (Carla, Ana, Bruno, Diego), retyped
NAMES = ("Carla", "Ana", "Bruno", "Diego")


def _dot(a: str, b: str) -> int:
    """The dot product of two people's rows from its formula, sum over l of x_il x_jl."""
    x, y = X_SEED[NAMES.index(a)], X_SEED[NAMES.index(b)]
    return sum(int(x[k]) * int(y[k]) for k in range(len(x)))


@pytest.mark.build
def test_the_dot_products_the_page_quotes():
    for other in ("Bruno", "Ana", "Diego"):
        assert bt.glued_float(PAGE, f"dot_carla_{other.lower()}") == _dot("Carla", other)


@pytest.mark.build
def test_exercise_dot_products_least_alike_and_the_tie_for_the_largest():
    pairs = {(a, b): _dot(a, b) for k, a in enumerate(NAMES) for b in NAMES[k + 1:]}
    low, top = min(pairs.values()), max(pairs.values())
    assert [p for p, v in pairs.items() if v == low] == [("Carla", "Diego")]  # the least alike is one pair
    tied = [f"{a} and {b}" for (a, b), v in pairs.items() if v == top]
    assert _plain("ex_dot_shape") == str((len(NAMES), len(NAMES)))
    assert _plain("ex_dot_low") == "Carla and Diego"
    assert bt.glued_float(PAGE, "ex_dot_low_value") == low
    assert bt.glued_float(PAGE, "ex_dot_top") == top
    assert bt.glued_float(PAGE, "ex_dot_tied_count") == len(tied) > 1
    assert _plain("ex_dot_tied") == ", ".join(tied)


@pytest.mark.build
def test_exercise_orientation_columns_say_whom_a_value_reaches():
    W3 = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.2, 0.3, 0.5]])  # the exercise's weights
    shown = re.search(r"\\begin\{pmatrix\}(.*?)\\end\{pmatrix\}", _exercise("ex-notation-orientation")).group(1)
    assert [[float(v) for v in row.split("&")] for row in shown.split(r"\\")] == W3.tolist()  # as the reader sees it
    reached = (W3 > 0).sum(axis=0)  # (3,): outputs each value reaches, by column
    assert bt.glued_float(PAGE, "ex_or_widest") == int(np.argmax(reached)) + 1
    assert bt.glued_float(PAGE, "ex_or_widest_count") == reached.max() == len(W3)
    assert bt.glued_float(PAGE, "ex_or_edges") == (W3 > 0).sum()


@pytest.mark.build
def test_exercise_path_edges_and_who_receives_most():
    """The path on n nodes with self-loops: n loops and two arrows for each of its n - 1 links; an inner
    node receives three arrows (its own and one from each neighbour), an end two."""
    n = len(NAMES)
    assert bt.glued_float(PAGE, "ex_path_loops") == n
    assert bt.glued_float(PAGE, "ex_path_edges") == n + 2 * (n - 1)
    assert _plain("ex_path_most") == " and ".join(NAMES[1:-1])
    assert bt.glued_float(PAGE, "ex_path_most_count") == 3
    # the solution says these are the edges of the introduction's top graph: it counted them too
    assert bt.glued_float(PAGE, "ex_path_edges") == bt.glued_float("intro", "intro_path_edges")


def test_the_exercises_use_nothing_the_reader_has_not_met():
    """The first chapter's exercises run on NumPy alone: no attention function of the package, which the
    next chapters teach."""
    text = (bt.BOOK / f"{PAGE}.md").read_text()
    exercises = text[text.index("## Exercises"):]
    shown = [body for name, _arg, options, body, _start in bt.blocks(exercises)
             if name == "code-cell" and "remove-cell" not in options.get("tags", "")]
    assert len(shown) == 3
    imports = {line.strip() for body in shown for line in body if line.startswith(("import", "from"))}
    assert imports == {"import numpy as np"}


# The four people: introduced on this page, where the book first uses them, from the package's data.

def test_the_four_people_live_in_notation_and_the_worked_example_reuses_them():
    assert table.PEOPLE == NAMES
    np.testing.assert_array_equal(table.embeddings(), X_SEED)
    assert we.embeddings is table.embeddings and we.PEOPLE is table.PEOPLE  # one implementation


@pytest.mark.build
def test_the_page_shows_each_person_with_her_vector():
    shown = bt.glued_table(PAGE, "tab-people")
    assert list(shown) == list(table.PEOPLE)
    assert {name: [int(c) for c in cells] for name, cells in shown.items()} == \
        {name: X_SEED[k].tolist() for k, name in enumerate(table.PEOPLE)}
    assert bt.glued_float(PAGE, "people_n") == len(X_SEED)
    assert bt.glued_float(PAGE, "people_d") == X_SEED.shape[1]


def test_the_people_come_before_any_chapter_uses_them():
    """The notation page gives the table before the exercises that use the four people."""
    text = (bt.BOOK / f"{PAGE}.md").read_text()
    assert text.index("{glue:md} tab-people") < text.index("## Exercises")


# The symbol table (attention_graph.notation, the one place it is kept): one entry per symbol, and
# every letter a page's mathematics uses has an entry.

_LETTER = r"\\(?:tilde|hat|bar)\s*\{?\\?[A-Za-z]+\}?|\\mathcal\{[A-Za-z]\}|\\[A-Za-z]+|[A-Za-z]"
_NOT_SYMBOLS = re.compile(r"\\(?:text|operatorname|mathrm|mathbb|mathbf|begin|end)\{[^}]*\}")
_COMMANDS = {"\\" + c for c in ("sum", "frac", "tfrac", "sqrt", "cdot", "cdots", "dots", "ldots", "top",
                                "le", "ge", "ne", "in", "notin", "cup", "to", "mapsto", "times", "circ", "pm",
                                "infty", "partial", "left", "right", "big", "Big", "lVert", "rVert", "Vert",
                                "lceil", "rceil", "lfloor", "rfloor", "log", "ln", "exp", "max", "min", "cos",
                                "sin", "binom", "quad", "qquad", "approx", "sim", "mid", "langle", "rangle",
                                "prod", "lim", "neq", "leq", "geq", "forall", "exists", "emptyset", "setminus",
                                "subseteq", "cap", "quad", "odot", "otimes", "star", "ell")}


def _symbols_of(tex: str) -> list[str]:
    tex = _NOT_SYMBOLS.sub(" ", tex)
    return [s.replace(" ", "") for s in re.findall(_LETTER, tex) if s not in _COMMANDS]


def _page_math(page) -> str:
    text = re.sub(r"```.*?```", " ", page.read_text(), flags=re.S)  # code and directives' bodies aside
    return " ".join(a or b for a, b in re.findall(r"\$\$(.+?)\$\$|\$([^$\n]+?)\$", text, flags=re.S))


def test_no_symbol_has_two_entries():
    twice = sorted(s for s, k in collections.Counter(table.entries()).items() if k > 1)
    assert twice == []


def test_the_table_has_entries():
    assert len(table.entries()) > 60


def test_every_letter_a_page_uses_is_in_the_table():
    known = {sym for e in table.entries() for sym in _symbols_of(e)}
    missing = {page.stem: sorted(set(_symbols_of(_page_math(page))) - known)
               for page in sorted((bt.ROOT / "book").glob("*.md"))}
    assert {k: v for k, v in missing.items() if v} == {}


def test_no_meaning_admits_a_second_meaning():
    """One symbol, one meaning: no entry of the table may excuse a second meaning of its symbol."""
    admitted = [symbol for _, rows in table.SYMBOLS for symbol, _, meaning in rows
                if re.search(r"second meaning|two meanings|also (?:the|a|an) ", meaning)]
    assert admitted == []


# A token, a position, a node or a layer numbered 0 in the prose or its mathematics (an index of the code
# is written as code, `0`, and said to be one).
_ZERO_BASED = re.compile(r"\b(?:token|position|node|member|row|column|layer|person|query|key|byte)s?\s+\$?0\$?(?![.\d])"
                         r"|\$[ijlt] = 0\$")


def test_the_mathematics_counts_from_one():
    """The mathematics counts from 1 (tokens 1, …, n), the code from 0: no page numbers a token, a position,
    a node or a layer 0 outside its code."""
    found = {page.stem: _ZERO_BASED.findall(mystsource.outside_code(page.read_text()))
             for page in sorted((bt.ROOT / "book").glob("*.md"))}
    assert {k: v for k, v in found.items() if v} == {}


# The figure of the four people: each row drawn at its point, named with its index from 1.

def test_plot_people_draws_each_row_at_its_point_named_from_one():
    from attention_graph import plots

    plots.use_book_style()
    ax = plots.plot_people(X_SEED, NAMES).axes[0]
    circles = [line.get_xydata()[0].tolist() for line in ax.lines if line.get_marker() == "o"
               and line.get_markerfacecolor() == "white"]
    assert circles == X_SEED.tolist()
    texts = [t.get_text() for t in ax.texts]
    for k, name in enumerate(NAMES):
        x, y = (f"{v}".replace("-", "−") for v in X_SEED[k])
        assert f"{name}\n$x_{k + 1}$ = ({x}, {y})" in texts


@pytest.mark.parametrize("call, message", [
    (lambda p: p.plot_people(np.ones((4, 3)), NAMES), "shape"),
    (lambda p: p.plot_people(np.ones((4, 2)), ["a"]), "labels"),
    (lambda p: p.plot_people([[np.nan, 0.0]], ["a"]), "X"),
])
def test_plot_people_refuses_bad_input_naming_the_argument(call, message):
    from attention_graph import plots

    with pytest.raises(ValueError, match=message):
        call(plots)
