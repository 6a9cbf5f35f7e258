"""The whole book as one PDF, printed by Chromium once MathJax has typeset each page: ``make pdf``
(``tools/browsertools.py``) writes ``_build/pdf/book.pdf``; these tests only read it (``make browser``
makes it first; CI publishes it).

Read back: each page's text and the text of its bottom margin once (PDFium, :func:`pdf_texts`), its
fonts with pypdf. One outline entry per document of ``_toc.yml``, in order, titled as the page is;
each chapter's title, equation numbers and figure numbers in its pages' text; glyphs of MathJax's
fonts (which Chromium embeds as Type 3 fonts) on the pages of every chapter that has math; no raw TeX
anywhere in the extracted text; every page after the contents has its number at its foot. A PDF
older than a page of the build is stale, and fails.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

import browsertools as bw
import buildpaths as paths
from visits import RAW_TEX  # raw TeX: a formula printed before, or without, MathJax

pytestmark = pytest.mark.browser


def squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@functools.cache
def html_facts(doc: str) -> dict:
    """What a chapter's HTML says its printed pages must show."""
    soup = BeautifulSoup((paths.HTML / f"{doc}.html").read_text(encoding="utf8"), "html.parser")
    article = soup.select_one("article") or soup
    h1 = article.find("h1")
    for junk in h1.select(".math, .headerlink"):
        junk.decompose()
    return {
        "title": squash(h1.get_text(" ")).rstrip(":").strip(),
        "math": bool(article.select(".math")),
        "eqnos": [squash(e.find(string=True, recursive=False) or "") for e in article.select("span.eqno")],
        "figures": [squash(e.get_text()) for e in article.select("figcaption .caption-number")],
    }


def type3_glyphs(pages) -> set[str]:
    """Characters drawn with Type 3 fonts: how Chromium embeds MathJax's web fonts (text is TrueType)."""
    chars: set[str] = set()
    for page in pages:
        for font in (page.get("/Resources", {}).get("/Font", {}) or {}).values():
            font = font.get_object()
            if font.get("/Subtype") != "/Type3" or "/ToUnicode" not in font:
                continue
            cmap = font["/ToUnicode"].get_object().get_data().decode("latin-1")
            for block in re.findall(r"beginbfchar(.*?)endbfchar", cmap, re.S):
                for hexes in re.findall(r"<[0-9A-Fa-f]+>\s*<([0-9A-Fa-f]+)>", block):
                    chars.add(bytes.fromhex(hexes).decode("utf-16-be", "replace"))
            # A run of codes maps to a run of characters: <lo> <hi> <first> (a page with i and j only).
            for block in re.findall(r"beginbfrange(.*?)endbfrange", cmap, re.S):
                for lo, hi, first in re.findall(r"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>", block):
                    start = int(first, 16)
                    chars.update(chr(start + k) for k in range(int(hi, 16) - int(lo, 16) + 1))
    return chars


def pdf_texts(path: Path) -> tuple[list[str], list[str]]:
    """The text of every page of a PDF, and the text of its bottom margin (``bw.PAGE_FORMAT``'s),
    where the page number is printed; read by PDFium (pypdf's reading of the book takes 7 s)."""
    import pypdfium2 as pdfium

    margin = float(bw.PAGE_FORMAT["margin"]["bottom"].removesuffix("mm")) / 25.4 * 72  # points
    texts, feet = [], []
    document = pdfium.PdfDocument(path)
    try:
        for page in document:
            text = page.get_textpage()
            texts.append(text.get_text_bounded())
            feet.append(text.get_text_bounded(0, 0, page.get_width(), margin))
    finally:
        document.close()
    return texts, feet


def page_title(doc: str) -> str:
    """A document's title as the PDF's outline gives it: its HTML ``<title>``, before the book's name."""
    title = BeautifulSoup((paths.HTML / f"{doc}.html").read_text(encoding="utf8"), "html.parser").title
    return bw.plain_title(squash(title.get_text()).rsplit(" \u2014 ", 1)[0])


@pytest.fixture(scope="session")
def book_pdf():
    """``_build/pdf/book.pdf`` as ``make pdf`` printed it from the build: (its reader, per document
    (docname, outline title, first page), per document its text, glyphs and page count, every page's
    text, every page's foot)."""
    from conftest import need_chromium
    from pypdf import PdfReader

    if not paths.PDF.is_file():
        need_chromium()  # no Chromium, no PDF: skip with how to install one (under CI=true, fail)
        pytest.fail(f"{paths.PDF} is missing: print it first (make pdf)")
    newest = max((paths.HTML / f"{doc}.html").stat().st_mtime for doc in bw.toc_docnames())
    if paths.PDF.stat().st_mtime < newest:
        pytest.fail(f"{paths.PDF} is older than the build's pages: print it again (make pdf)")
    reader = PdfReader(paths.PDF)
    outline = [(item.title, reader.get_destination_page_number(item)) for item in reader.outline]
    chapters = [(doc, title, start) for doc, (title, start) in zip(bw.toc_docnames(), outline)]
    texts, feet = pdf_texts(paths.PDF)
    assert len(texts) == len(reader.pages)
    starts = [start for _, _, start in chapters] + [len(reader.pages)]
    parts = {}
    for (doc, title, start), end in zip(chapters, starts[1:]):
        pages = reader.pages[start:end]
        parts[doc] = {"title": title, "text": squash(" ".join(texts[start:end])),
                      "glyphs": type3_glyphs(pages), "pages": end - start}
    return reader, chapters, parts, texts, feet


def test_one_pdf_with_every_document_in_toc_order(book_pdf):
    reader, chapters, parts, *_ = book_pdf
    assert len(reader.outline) == len(chapters) == len(bw.toc_docnames())
    assert [title for _, title, _ in chapters] == [page_title(doc) for doc in bw.toc_docnames()]
    starts = [start for _, _, start in chapters]
    assert starts == sorted(set(starts)) and starts[0] >= 1  # in order, after the front matter
    assert all(part["pages"] >= 1 for part in parts.values())
    assert paths.PDF.stat().st_size > 0


@pytest.mark.parametrize("doc", bw.toc_docnames())
def test_chapter_title_equations_and_figures_are_printed(book_pdf, doc):
    facts, part = html_facts(doc), book_pdf[2][doc]
    if facts["title"]:
        assert facts["title"] in part["text"], f"{doc}: title {facts['title']!r} not in its pages"
    missing = [n for n in facts["eqnos"] if n not in part["text"]]
    assert missing == [], f"{doc}: equation numbers missing from the PDF"
    missing = [n for n in facts["figures"] if n not in part["text"]]
    assert missing == [], f"{doc}: figure numbers missing from the PDF"


@pytest.mark.parametrize("doc", bw.toc_docnames())
def test_math_is_typeset_in_the_pdf(book_pdf, doc):
    facts, part = html_facts(doc), book_pdf[2][doc]
    raw = sorted({m.group(0) for m in RAW_TEX.finditer(part["text"])})
    assert raw == [], f"{doc}: raw TeX in the PDF text"
    if facts["math"]:
        assert part["glyphs"], f"{doc}: has math, but no MathJax glyph is drawn on its pages"


def _front(book_pdf):
    """The text of each page before the first chapter."""
    _, chapters, _, texts, _ = book_pdf
    return texts[:chapters[0][2]]


def test_the_first_page_is_a_title_page(book_pdf):
    import yaml

    config = yaml.safe_load((paths.ROOT / "_config.yml").read_text())
    first = squash(_front(book_pdf)[0])
    assert config["title"] in first and config["author"] in first
    assert "Contents" not in first  # the contents start on a page of their own


def test_the_contents_give_each_chapter_the_page_it_starts_on(book_pdf):
    _, chapters, _, texts, _ = book_pdf
    offset = chapters[0][2]
    contents = squash(" ".join(_front(book_pdf)[1:]))
    assert contents.startswith("Contents")
    # Compared without spaces: text extraction puts spaces around some glyphs (Kᵀ, √). The rows in
    # order, each title followed by its page: "Attention is a graph 1", "1. Notation 5", …
    tight = re.sub(r"\s+", "", contents)
    rows = "".join(re.sub(r"\s+", "", title) + str(start - offset + 1) for _, title, start in chapters)
    assert tight == "Contents" + rows
    for doc, _, start in chapters:
        number = start - offset + 1
        printed = squash(texts[start])
        assert printed.rstrip().endswith(str(number)), f"{doc}: page {number} does not say so"


def test_every_page_after_the_contents_shows_its_number(book_pdf):
    _, chapters, _, _, feet = book_pdf
    offset = chapters[0][2]
    # The foot holds the number; a tall bracket of a formula at the page's end may reach into it.
    wrong = [k + 1 for k, foot in enumerate(feet[offset:]) if str(k + 1) not in foot.split()]
    assert wrong == [], f"pages without their number at the foot: {wrong[:10]}"
