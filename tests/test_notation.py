"""The notation page's exercises (shapes, the orientation, the heads), recomputed independently; the symbol table."""

import collections
import re

import numpy as np
import pytest

import booktools as bt
import mystsource
from attention_graph import notation as table
from attention_graph import worked_example as we

PAGE = "notation"
COUNTS = {"One": 1, "Two": 2, "Three": 3, "Four": 4, "Five": 5}


def _plain(key: str) -> str:
    return bt.glued_plain(PAGE, key).strip("'")


def _exercise(label: str) -> str:
    """The statement of exercise ``label``, as the page's source writes it."""
    text = (bt.BOOK / f"{PAGE}.md").read_text()
    return next("\n".join(line for line in body if not line.startswith(":"))
                for name, _arg, options, body, _start in bt.blocks(text)
                if name == "exercise" and options.get("label") == label)


def _size(statement: str, symbol: str) -> int:
    return int(re.search(re.escape(symbol) + r" = (\d+)\$", statement).group(1))


@pytest.mark.build
def test_exercise_shapes_name_queries_keys_and_value_width():
    statement = _exercise("ex-notation-shapes")  # "Two decoder queries attend to the four people ..."
    n_q, n_k, d_v = COUNTS[statement.split()[0]], len(we.PEOPLE), _size(statement, "d_v")
    assert _plain("ex_shape_Y") == str((n_q, d_v))
    assert _plain("ex_shape_W") == str((n_q, n_k))


@pytest.mark.build
def test_exercise_orientation_columns_say_whom_a_value_reaches():
    W3 = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.2, 0.3, 0.5]])  # the exercise's weights
    reached = (W3 > 0).sum(axis=0)  # (3,): outputs each value reaches, by column
    assert bt.glued_float(PAGE, "ex_or_widest") == int(np.argmax(reached)) + 1
    assert bt.glued_float(PAGE, "ex_or_widest_count") == reached.max() == len(W3)
    assert bt.glued_float(PAGE, "ex_or_edges") == (W3 > 0).sum()


@pytest.mark.build
def test_exercise_heads_width_and_weight_shape():
    statement = _exercise("ex-notation-heads")
    d_model, H, n = _size(statement, r"d_{\text{model}}"), _size(statement, "H"), len(we.PEOPLE)
    assert bt.glued_float(PAGE, "ex_heads_dh") == d_model // H
    assert _plain("ex_heads_shape") == str((H, n, n))


# The four people: introduced on this page, where the book first uses them, from the package's data.

X_SEED = np.array([[0, 1], [1, 0], [1, 1], [1, -1]])  # the seed's table (Carla, Ana, Bruno, Diego), retyped


def test_the_four_people_live_in_notation_and_the_worked_example_reuses_them():
    assert table.PEOPLE == ("Carla", "Ana", "Bruno", "Diego")
    np.testing.assert_array_equal(table.embeddings(), X_SEED)
    assert we.embeddings is table.embeddings and we.PEOPLE is table.PEOPLE  # one implementation


@pytest.mark.build
def test_the_page_shows_each_person_with_her_vector():
    md = bt.glue_data(PAGE)["tab-people"]["data"]["text/markdown"]
    rows = {r.split("|")[1].strip().strip("*"): [int(c) for c in r.split("|")[2:4]]
            for r in md.splitlines() if r.startswith("| **")}
    assert rows == {name: X_SEED[k].tolist() for k, name in enumerate(table.PEOPLE)}
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
