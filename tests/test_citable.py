"""Citable derivations: stable labels with numbers and permalinks, a complete bibliography, a valid
CITATION.cff, and an index of results generated from the sources."""

import re

import pytest
import yaml

import booktools as bt
import buildpaths as paths
import mystsource
import package_data
from attention_graph import citable
from package_data import book_results

ITEMS = book_results(bt.ROOT)

FORMER = package_data.book_former_labels(bt.ROOT)


# A frozen label that is not a numbered result: a place readers cite by its anchor (a section or an
# aside, `(sec-path-ends)=`), frozen by hand; make freeze-labels adds results only.
PLACES = [x for x in package_data.frozen_labels() if x.startswith("sec-")]


def book_targets() -> dict[str, str]:
    """{label: page} of every MyST target line ``(label)=`` of the book's pages."""
    return {label: page.stem for page in sorted((bt.ROOT / "book").glob("*.md"))
            for _, label in mystsource.targets(page.read_text(encoding="utf-8"))}


def test_no_frozen_label_disappears():
    """Removing or renaming a frozen label fails here (citations point at it) until it is removed from
    tests/public_labels.txt on purpose. New labels are frozen at publishing (make freeze-labels). A
    renamed result keeps its former label as a second anchor (a MyST target right above it), and
    both labels stay frozen; a frozen place (``sec-``) must still be a target of a page."""
    in_book = [it.label for it in ITEMS]
    assert set(package_data.frozen_labels()) - set(in_book) - set(FORMER) - set(PLACES) == set(), \
        "labels removed or renamed"
    assert set(PLACES) - set(book_targets()) == set(), "frozen places removed or renamed"
    assert len(in_book) == len(set(in_book)), "a label is used twice"
    assert set(FORMER) & set(in_book) == set(), "a former label is also a current one"
    assert {it.label for it in FORMER.values()} <= set(package_data.frozen_labels()), "a new label is not frozen"


@pytest.mark.build
@pytest.mark.parametrize("label", PLACES)
def test_every_frozen_place_has_its_anchor(label):
    html = (paths.HTML / "book" / f"{book_targets()[label]}.html").read_text()
    assert f'id="{label}"' in html, f"no anchor #{label} in {book_targets()[label]}.html"


def test_freezing_adds_new_labels_and_keeps_every_frozen_one(tmp_path):
    frozen = tmp_path / "labels.txt"
    frozen.write_text("# a comment\neq-gone\n")
    added = package_data.freeze_labels(bt.ROOT, frozen)
    assert "eq-gone" in package_data.frozen_labels(frozen) and added
    assert set(added) == {it.label for it in ITEMS} and package_data.freeze_labels(bt.ROOT, frozen) == []


def test_labels_are_readable():
    bad = [it.label for it in ITEMS if not citable.LABEL_PATTERN.match(it.label)]
    assert bad == [], f"labels must look like eq-scaled-scores or thm-rows-sum-to-one: {bad}"


def test_label_prefix_matches_its_kind():
    prefix = {"equation": "eq", "figure": "fig", "theorem": "thm", "lemma": "lem",
              "proposition": "prop", "corollary": "cor", "definition": "def", "exercise": "ex"}
    assert [it.label for it in ITEMS if not it.label.startswith(prefix[it.kind] + "-")] == []


@pytest.mark.build
@pytest.mark.parametrize("item", ITEMS, ids=lambda it: it.label)
def test_every_result_has_a_number_and_a_permalink_anchor(item):
    html = (paths.HTML / "book" / f"{item.page}.html").read_text()
    anchor = f"equation-{item.label}" if item.kind == "equation" else item.label
    assert f'id="{anchor}"' in html, f"no anchor #{anchor} in {item.page}.html"
    if item.kind == "equation":
        assert re.search(rf'id="{anchor}"[\s\S]{{0,400}}?<span class="eqno">\(\d+(\.\d+)*\)', html)
    elif item.kind == "figure":
        assert re.search(rf'id="{anchor}"[\s\S]*?caption-number">Fig\. \d+(\.\d+)*', html)
    else:
        assert re.search(rf'id="{anchor}"[\s\S]{{0,800}}?\b\w+ \d+(\.\d+)*', html)


@pytest.mark.build
@pytest.mark.parametrize("former", sorted(FORMER))
def test_a_former_label_anchors_its_result(former):
    """The permalink of a former label lands on its renamed result: the two anchors sit together."""
    item = FORMER[former]
    html = (paths.HTML / "book" / f"{item.page}.html").read_text()
    assert re.search(rf'id="{former}"[^<]*(<[^>]*>\s*){{0,3}}?<[^>]*id="{item.label}"'
                     rf'|id="{item.label}"[^<]*(<[^>]*>\s*){{0,3}}?<[^>]*id="{former}"', html), \
        f"#{former} is not beside #{item.label} in {item.page}.html"


@pytest.mark.build
def test_the_index_page_lists_every_result():
    html = re.sub(r"<[^>]+>", " ", (paths.HTML / "book" / "derivations.html").read_text())
    for it in ITEMS:
        assert it.label in html
    assert bt.glued_float("derivations", "n_results") == len(ITEMS)


@pytest.mark.build
def test_the_glued_bibtex_is_made_from_citation_cff():
    glued = bt.glue_data("how_to_cite")["bibtex"]["data"]["text/markdown"]
    assert citable.book_bibtex((bt.ROOT / "CITATION.cff").read_text()) in glued
    cff = yaml.safe_load((bt.ROOT / "CITATION.cff").read_text())
    assert cff["title"] in glued and str(cff["version"]) in glued


# CITATION.cff is checked against the rules of the Citation File Format 1.2.0 that GitHub and the
# book rely on, written out here (no CFF tool is installed: its pins clash with Jupyter Book's).
CFF_KEYS = {"abstract", "authors", "cff-version", "commit", "contact", "date-released", "doi",
            "identifiers", "keywords", "license", "license-url", "message", "preferred-citation",
            "references", "repository", "repository-artifact", "repository-code", "title", "type",
            "url", "version"}
CFF_REFERENCE_TYPES = {"article", "article-journal", "blog", "book", "chapter", "conference-paper",
                       "data", "generic", "manual", "report", "software", "thesis", "website"}


def _cff_person_problems(person, where: str) -> list[str]:
    if not isinstance(person, dict):
        return [f"{where} must be a mapping"]
    if isinstance(person.get("name"), str) and person["name"].strip():
        return []  # an entity
    if isinstance(person.get("family-names"), str) or isinstance(person.get("given-names"), str):
        return []  # a person
    return [f"{where} needs a name (an entity) or family-names/given-names (a person)"]


def _cff_work_problems(work: dict, where: str, types: set[str]) -> list[str]:
    problems = []
    if work.get("type") not in types:
        problems.append(f"{where}type must be one of {sorted(types)}; got {work.get('type')!r}")
    if not (isinstance(work.get("title"), str) and work["title"].strip()):
        problems.append(f"{where}title must be a non-empty string")
    authors = work.get("authors")
    if not (isinstance(authors, list) and authors):
        problems.append(f"{where}authors must be a non-empty list")
    else:
        for k, person in enumerate(authors):
            problems += _cff_person_problems(person, f"{where}authors[{k}]")
    return problems


def cff_problems(cff) -> list[str]:
    """What makes ``cff`` (a parsed CITATION.cff) invalid as CFF 1.2.0; empty when valid."""
    if not isinstance(cff, dict):
        return ["a CITATION.cff is a mapping"]
    problems = [f"unknown key {k!r}" for k in sorted(set(cff) - CFF_KEYS)]
    if cff.get("cff-version") != "1.2.0":
        problems.append(f"cff-version must be \"1.2.0\" (a string); got {cff.get('cff-version')!r}")
    if not (isinstance(cff.get("message"), str) and cff["message"].strip()):
        problems.append("message must be a non-empty string")
    problems += _cff_work_problems(cff, "", {"software", "dataset"})
    if "version" in cff and not isinstance(cff["version"], (str, int, float)):
        problems.append("version must be a string or a number")
    date = str(cff.get("date-released", "2000-01-01"))
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", date):
        problems.append(f"date-released must be YYYY-MM-DD; got {date!r}")
    if not all(isinstance(k, str) for k in cff.get("keywords", [])):
        problems.append("keywords must be strings")
    for k, ref in enumerate(cff.get("references", [])):
        problems += _cff_work_problems(ref, f"references[{k}].", CFF_REFERENCE_TYPES)
    if "preferred-citation" in cff:
        problems += _cff_work_problems(cff["preferred-citation"], "preferred-citation.",
                                       CFF_REFERENCE_TYPES)
    return problems


def test_citation_cff_is_valid_cff():
    cff = yaml.safe_load((bt.ROOT / "CITATION.cff").read_text())
    assert cff_problems(cff) == []
    assert cff["license"] == "MIT" and (bt.ROOT / "LICENSE").exists()


@pytest.mark.parametrize("broken, problem", [
    ({"cff-version": "1.2.0", "title": "x"}, "message"),
    ({"cff-version": 1.2, "message": "m", "title": "x", "authors": [{"name": "A"}]}, "cff-version"),
    ({"cff-version": "1.2.0", "message": "m", "title": "x", "authors": []}, "authors"),
    ({"cff-version": "1.2.0", "message": "m", "title": "x", "authors": [{"email": "a@b"}]}, "name"),
    ({"cff-version": "1.2.0", "message": "m", "title": "x", "authors": [{"name": "A"}],
      "date-released": "29/11/2026"}, "date-released"),
    ({"cff-version": "1.2.0", "message": "m", "title": "x", "authors": [{"name": "A"}],
      "preferred-citation": {"type": "novel", "title": "x", "authors": [{"name": "A"}]}}, "type"),
    ({"cff-version": "1.2.0", "message": "m", "title": "x", "authors": [{"name": "A"}], "titel": "x"},
     "unknown key"),
])
def test_an_invalid_cff_is_refused(broken, problem):
    assert any(problem in p for p in cff_problems(broken)), cff_problems(broken)


# --- Bibliography -----------------------------------------------------------------------------------

def _bib_entries() -> dict[str, str]:
    text = (bt.ROOT / "references.bib").read_text()
    return {m.group(1): m.group(0) for m in re.finditer(r"@\w+\{([\w:-]+),[\s\S]*?\n\}", text)}


def _cited_keys() -> set[str]:
    keys = set()
    for page in bt.pages():
        for m in re.finditer(r"\{cite(?::\w+)?\}`([^`]+)`", page.read_text()):
            keys |= {k.strip() for k in m.group(1).split(",")}
    return keys


def test_every_cited_key_is_in_references_bib():
    assert _cited_keys() - set(_bib_entries()) == set()


def test_every_bib_entry_is_cited_somewhere():
    assert set(_bib_entries()) - _cited_keys() == set()


@pytest.mark.parametrize("key", sorted(_bib_entries()))
def test_bib_entries_carry_an_identifier(key):
    entry = _bib_entries()[key]
    assert re.search(r"\b(doi|eprint|url)\s*=", entry) or key == "grafosml10", key


@pytest.mark.parametrize("key", sorted(_bib_entries()))
def test_bib_venue_year_agrees_with_year(key):
    """A year named in the venue (booktitle, e.g. "DLG-AAAI 2021") is the entry's year."""
    entry = _bib_entries()[key]
    year = re.search(r"\byear\s*=\s*\{(\d{4})\}", entry)
    venue = re.search(r"\b(?:booktitle|journal)\s*=\s*\{(.*)\},?\n", entry)
    assert year or key == "grafosml10", key
    if year and venue:
        assert set(re.findall(r"\b(?:19|20)\d\d\b", venue.group(1))) <= {year.group(1)}, key


def test_required_sources_are_present():
    required = ["vaswani2017attention", "kipf2017semi", "velickovic2018graph", "dwivedi2020generalization",
                "joshi2020transformers", "page1999pagerank", "milakov2018online", "dao2022flashattention",
                "jain2019attention", "abnar2020quantifying", "grafosml10"]
    assert set(required) <= set(_bib_entries())
