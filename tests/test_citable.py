"""Citable derivations: stable labels with numbers and permalinks, a complete bibliography, a valid
CITATION.cff, and an index of results generated from the sources."""

import importlib.util
import json
import re
from pathlib import Path

import pytest
import yaml

import booktools as bt
from attention_graph import citable

LABELS_FILE = Path(__file__).with_name("public_labels.txt")
ITEMS = citable.citables(bt.ROOT)


def _committed_labels() -> list[str]:
    lines = LABELS_FILE.read_text().splitlines()
    return [x.strip() for x in lines if x.strip() and not x.startswith("#")]


def test_public_labels_match_the_committed_list():
    """Removing or renaming a label fails here until tests/public_labels.txt is changed on purpose."""
    in_book = sorted(it.label for it in ITEMS)
    committed = sorted(_committed_labels())
    assert set(committed) - set(in_book) == set(), "labels removed or renamed"
    assert set(in_book) - set(committed) == set(), "new labels: add them to tests/public_labels.txt"
    assert len(in_book) == len(set(in_book)), "a label is used twice"


def test_labels_are_readable():
    bad = [it.label for it in ITEMS if not citable.LABEL_PATTERN.match(it.label)]
    assert bad == [], f"labels must look like eq-scaled-scores or thm-rows-sum-to-one: {bad}"


def test_label_prefix_matches_its_kind():
    prefix = {"equation": "eq", "figure": "fig", "theorem": "thm", "lemma": "lem",
              "proposition": "prop", "corollary": "cor", "definition": "def", "exercise": "ex"}
    assert [it.label for it in ITEMS if not it.label.startswith(prefix[it.kind] + "-")] == []


@pytest.mark.parametrize("item", ITEMS, ids=lambda it: it.label)
def test_every_result_has_a_number_and_a_permalink_anchor(item):
    html = (bt.HTML / f"{item.page}.html").read_text()
    anchor = f"equation-{item.label}" if item.kind == "equation" else item.label
    assert f'id="{anchor}"' in html, f"no anchor #{anchor} in {item.page}.html"
    if item.kind == "equation":
        assert re.search(rf'id="{anchor}"[\s\S]{{0,400}}?<span class="eqno">\(\d+\)', html)
    elif item.kind == "figure":
        assert re.search(rf'id="{anchor}"[\s\S]*?caption-number">Fig\. \d+', html)
    else:
        assert re.search(rf'id="{anchor}"[\s\S]{{0,800}}?\b\w+ \d+(\.\d+)*', html)


def test_the_index_page_lists_every_result():
    html = re.sub(r"<[^>]+>", " ", (bt.HTML / "derivations.html").read_text())
    for it in ITEMS:
        assert it.label in html
    assert bt.glued_float("derivations", "n_results") == len(ITEMS)


def test_the_glued_bibtex_is_made_from_citation_cff():
    glued = bt.glue_data("how_to_cite")["bibtex"]["data"]["text/markdown"]
    assert citable.book_bibtex(bt.ROOT) in glued
    cff = yaml.safe_load((bt.ROOT / "CITATION.cff").read_text())
    assert cff["title"] in glued and str(cff["version"]) in glued


def test_citation_cff_is_valid_against_the_cff_schema():
    import jsonschema

    spec = importlib.util.find_spec("cffconvert")
    assert spec is not None, "cffconvert (for its CFF schema) is installed by make; run make test"
    schema_path = Path(spec.submodule_search_locations[0]) / "schemas" / "1.2.0" / "schema.json"
    schema = json.loads(schema_path.read_text())
    cff = yaml.safe_load((bt.ROOT / "CITATION.cff").read_text(), )
    cff = json.loads(json.dumps(cff, default=str))  # dates as strings, as the schema expects
    jsonschema.validate(cff, schema)


def test_an_invalid_cff_is_refused():
    import jsonschema

    spec = importlib.util.find_spec("cffconvert")
    schema = json.loads((Path(spec.submodule_search_locations[0]) / "schemas" / "1.2.0" /
                         "schema.json").read_text())
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"cff-version": "1.2.0", "title": "x"}, schema)


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


def test_required_sources_are_present():
    required = ["vaswani2017attention", "kipf2017semi", "velickovic2018graph", "dwivedi2020generalization",
                "joshi2020transformers", "page1999pagerank", "milakov2018online", "dao2022flashattention",
                "jain2019attention", "abnar2020quantifying", "grafosml10"]
    assert set(required) <= set(_bib_entries())
