"""Explorable figures: a static figure's interactive twin, drawn by JavaScript in the reader's browser.

In a page::

    :::{explorable} worked
    :title: Move the four people
    ```{glue} explore-worked
    ```
    :::

The directive emits ``<div class="explorable" data-explorable="worked" hidden>`` around its body
(here the glued JSON state the package computed at build time, with its schema:
``attention_graph.explorables``); ``static/explore.js`` finds the div, checks the state against the
schema, unhides it and builds the controls with the code registered under that name
(``static/explore_<name>.js``). The static figure stays on the page: it is what a reader without
JavaScript sees and what the PDF prints (``static/book.css`` hides explorables under ``@media print``).
Builders other than HTML get nothing.

Enable it in ``_config.yml`` under ``sphinx.local_extensions``.
"""

from __future__ import annotations

from html import escape

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective

# The shared module first, then one file per explorable (each registers itself with the module).
SCRIPTS = ("explore.js", "explore_worked.js", "explore_softmax.js", "explore_fixed.js",
           "explore_online.js", "explore_patterns.js",
           "explore_karate.js")


class explorable(nodes.General, nodes.Element):  # noqa: N801 - docutils names nodes in lower case
    pass


class ExplorableDirective(SphinxDirective):
    required_arguments = 1
    has_content = True
    option_spec = {"title": directives.unchanged_required}

    def run(self):
        node = explorable(name=self.arguments[0], title=self.options.get("title", ""))
        self.state.nested_parse(self.content, self.content_offset, node)
        return [node]


def visit_html(self, node):
    title = escape(node["title"], quote=True)
    self.body.append(f'<div class="explorable" data-explorable="{escape(node["name"], quote=True)}" '
                     f'data-title="{title}" role="group" aria-label="{title}" hidden>')


def depart_html(self, node):
    self.body.append("</div>")


def skip(self, node):
    raise nodes.SkipNode


def setup(app):
    app.add_node(explorable, html=(visit_html, depart_html), latex=(skip, None), text=(skip, None),
                 man=(skip, None), texinfo=(skip, None))
    app.add_directive("explorable", ExplorableDirective)
    app.add_css_file("explore.css")
    for name in SCRIPTS:
        app.add_js_file(name, defer="defer")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
