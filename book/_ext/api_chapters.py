"""The per-chapter sections of ``book/api.md``, generated from the package's public names.

In ``book/api.md``::

    ```{api-chapters}
    block: The fields of `BlockParams` are the names a loader fills.
    ```

emits one section per chapter whose concept module exports a name (in the order of ``_toc.yml``),
as subsections of the section it stands in: its title (the chapter's), a line naming the module and
linking the chapter, the optional note the content
gives for that stem (``stem: Markdown text``, one line each), and an ``autofunction`` or ``autoclass``
for every name of the module's ``__all__``. What a module exports is read from the package data that
``tools/package_data.py`` writes before every build (``attention_graph/data/api.json``): a Sphinx
extension does not import the package. A new chapter's names therefore reach this page with no edit
of it; a note is never required.

Enable it in ``_config.yml`` under ``sphinx.local_extensions``.
"""

from __future__ import annotations

import json
from pathlib import Path

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective

API = Path("code") / "attention_graph" / "data" / "api.json"  # from the book's root


def chapters(app) -> list[dict]:
    """[{"stem", "title", "module", "names": [{"name", "kind", "members"?}]}], as package_data.py wrote it."""
    path = Path(app.confdir) / API
    return json.loads(path.read_text(encoding="utf-8"))["chapters"] if path.exists() else []


def notes(lines) -> dict[str, str]:
    """{stem: note} from the directive's content, one ``stem: text`` a line."""
    found = {}
    for line in lines:
        if line.strip():
            stem, sep, text = line.partition(":")
            if not sep or not stem.strip().isidentifier():
                raise ValueError(f"api-chapters: a note is 'stem: text', not {line!r}")
            found[stem.strip()] = text.strip()
    return found


def markdown(chapter: dict, note: str | None) -> list[str]:
    """The body of one chapter's section, as MyST Markdown (parsed by the page's own parser)."""
    lines = [f"From `{chapter['module']}` ({{doc}}`the chapter <{chapter['stem']}>`)." + (f" {note}" if note else ""),
             "", "```{eval-rst}"]
    for item in chapter["names"]:
        if item["kind"] == "class":
            lines.append(f".. autoclass:: attention_graph.{item['name']}")
            members = item.get("members", [])
            lines.append(f"   :members: {', '.join(members)}" if members else "   :no-members:")
        else:
            lines.append(f".. autofunction:: attention_graph.{item['name']}")
    return lines + ["```"]


class ApiChaptersDirective(SphinxDirective):
    has_content = True

    def run(self):
        given = notes(self.content)
        found = chapters(self.env.app)
        unknown = set(given) - {c["stem"] for c in found}
        if found and unknown:
            raise self.error(f"api-chapters: a note for no chapter with public names: {sorted(unknown)}")
        self.env.note_dependency(str((Path(self.env.app.confdir) / API).resolve()))
        sections = []
        for chapter in found:
            section = nodes.section(ids=[f"api-{chapter['stem'].replace('_', '-')}"])
            section += nodes.title(text=chapter["title"])
            self.state.nested_parse(StringList(markdown(chapter, given.get(chapter["stem"]))),
                                    self.content_offset, section)
            sections.append(section)
        return sections


def setup(app):
    app.add_directive("api-chapters", ApiChaptersDirective)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
