"""Write the language model's corpus into the package data: the Python language reference's topics.

``pydoc_data.topics`` ships with every CPython (the text ``help()`` shows for keywords and symbols,
from the Python documentation, under the PSF licence). This joins its topics in the order of their
keys, each after a line ``== key ==``, and writes three files into ``code/attention_graph/data/``:
``lm_corpus.txt`` (the text, UTF-8), ``lm_corpus_LICENSE.txt`` (the Python licence, copied from the
running interpreter's ``LICENSE.txt``) and ``lm_corpus_source.json`` (where the text came from, its
size and SHA-256). The training reads only the packaged copy, so a run reproduces on any Python.

    .venv/bin/python tools/lm_corpus.py
"""

from __future__ import annotations

import hashlib
import json
import pydoc_data.topics
import sys
import sysconfig
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "code" / "attention_graph" / "data"


def corpus_text() -> str:
    topics = pydoc_data.topics.topics
    return "".join(f"== {key} ==\n{topics[key].strip()}\n\n" for key in sorted(topics))


def main() -> None:
    text = corpus_text()
    raw = text.encode("utf-8")
    (DATA / "lm_corpus.txt").write_bytes(raw)
    licence = Path(sysconfig.get_paths()["stdlib"]) / "LICENSE.txt"
    (DATA / "lm_corpus_LICENSE.txt").write_text(licence.read_text())
    source = {"module": "pydoc_data.topics", "python": sys.version.split()[0],
              "topics": len(pydoc_data.topics.topics), "bytes": len(raw),
              "sha256": hashlib.sha256(raw).hexdigest(),
              "licence": "Python Software Foundation License (lm_corpus_LICENSE.txt)",
              "origin": "the Python documentation's language reference, as CPython ships it for help()"}
    (DATA / "lm_corpus_source.json").write_text(json.dumps(source, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
