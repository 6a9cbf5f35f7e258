"""How dense a page's prose is: words a sentence, long sentences, semicolons, computed numbers a paragraph.

The measure the book's first-reading standard is stated in (issue "A first book, second attempt"), against
d2l's attention chapters measured the same way. Code fences and math are dropped; directives that hold prose
(theorems, notes, exercises, figures) keep their text; a glue role counts as one computed number, and so does
a typed number of two or more digits. Run as a script for a report:
``python tools/prose_density.py book/softmax.md book/attention.md`` prints one JSON line a page.
"""

from __future__ import annotations

import json
import re
import statistics
import sys

# The targets, per content chapter: d2l's figures (median 18 words, 3.4 % over 40, 3.9 semicolons a
# thousand words, 1 paragraph in the chapters with more than 5 numbers).
TARGET = {"median_words_per_sentence": 18, "share_over_40_words": 0.03, "semicolons_per_1000_words": 4.0,
          "paragraphs_with_over_5_numbers": 0}

_PROSE_DIRECTIVES = (r"(?:\{(?:note|tip|important|warning|admonition|prf:\w+|exercise|solution|figure|dropdown|"
                     r"hint|seealso|epigraph|margin|sidebar|topic|summary)\})")
_WORD = re.compile(r"[\w'’-]+")


def paragraphs(text: str) -> list[str]:
    """The page's prose paragraphs (of 8 words or more), with math, code and references replaced by tokens."""
    text = re.sub(r"^(`{3,}|~{3,})(?!" + _PROSE_DIRECTIVES + r").*?^\1\s*$", "\n", text, flags=re.S | re.M)
    text = re.sub(r"^(?:`{3,}|:{3,}|~{3,}).*$", "\n", text, flags=re.M)
    text = re.sub(r"\$\$.*?\$\$", " MATH ", text, flags=re.S)
    text = re.sub(r"\{math\}`[^`]*`", " MATH ", text)
    text = re.sub(r"\$[^$\n]+\$", " MATH ", text)
    text = re.sub(r"\{glue:?\w*\}`[^`]*`", " NUM ", text)
    text = re.sub(r"\{(numref|ref|eq|cite|cite:p|cite:t|doc|prf:ref|term|download)\}`[^`]*`", " REF ", text)
    text = re.sub(r"\{[\w:-]+\}`([^`]*)`", r" \1 ", text)
    text = re.sub(r"`[^`]*`", " CODE ", text)
    text = re.sub(r"<[^>]+>", " ", text)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    out = []
    for p in re.split(r"\n\s*\n", text):
        lines = [line for line in p.splitlines()
                 if line.strip() and not re.match(r"\s*(:[\w-]+:|\||#|\(|---|\+\+\+|%|:::|```|- \[|!\[)", line)]
        if not lines:
            continue
        p = " ".join(line.strip().lstrip("-*> ").strip() for line in lines)
        if len(re.findall(r"[A-Za-z]{2,}", p)) >= 8:
            out.append(p)
    return out


def sentences(paragraph: str) -> list[str]:
    """The paragraph's sentences of three words or more (abbreviations such as e.g. and Fig. do not end one)."""
    p = re.sub(r"\b(e\.g|i\.e|et al|Fig|Eq|vs|cf|Sec|Ch|approx|resp)\.", lambda m: m.group(0).replace(".", "·"),
               paragraph)
    return [s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z(])", p) if len(re.findall(r"\w+", s)) >= 3]


def computed_numbers(paragraph: str) -> int:
    """Glued numbers, and typed numbers with a decimal point or two digits or more."""
    return len(re.findall(r"\bNUM\b|(?<![\w.])\d+(?:[.,]\d+)+(?![\w.])|(?<![\w.])\d{2,}(?![\w.])", paragraph))


def density(text: str) -> dict[str, float]:
    """The four figures of :data:`TARGET` for one page's source, and the counts behind them."""
    lengths, semicolons, words, numbers = [], 0, 0, []
    for p in paragraphs(text):
        words += len(_WORD.findall(p))
        semicolons += p.count(";")
        numbers.append(computed_numbers(p))
        lengths += [len(_WORD.findall(s)) for s in sentences(p)]
    return {"sentences": len(lengths), "words": words,
            "median_words_per_sentence": float(statistics.median(lengths)) if lengths else 0.0,
            "share_over_40_words": round(sum(n > 40 for n in lengths) / max(1, len(lengths)), 3),
            "semicolons_per_1000_words": round(1000 * semicolons / max(1, words), 2),
            "paragraphs_with_over_5_numbers": sum(n > 5 for n in numbers)}


def over_target(figures: dict[str, float], target: dict[str, float] = TARGET) -> dict[str, float]:
    """The figures of a page that exceed their target (empty when the page meets every one)."""
    return {k: figures[k] for k in target if figures[k] > target[k]}


if __name__ == "__main__":
    for name in sys.argv[1:]:
        with open(name, encoding="utf-8") as f:
            print(name, json.dumps(density(f.read())))
