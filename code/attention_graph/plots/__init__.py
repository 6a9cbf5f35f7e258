"""Every figure of the book, drawn from the package's own arrays (no plot code lives in a cell).

One module per chapter, named as its page (``plots/softmax.py`` draws ``book/softmax.md``'s
figures), sharing :mod:`.style` (the book's look and the one :func:`~.style.finish`) and
:mod:`.graphs` (drawings several chapters share: the attention graph, the heat map, the layouts).
This package re-exports every public name of its modules, found by itself, so a page writes
``from attention_graph.plots import plot_pull`` and a new chapter adds only its own module.

A page calls :func:`use_book_style` once, before its first figure: it selects the non-interactive
backend, the book's rcParams (:data:`STYLE`) and IPython's SVG output. Every figure then leaves
through :func:`~.style.finish`, which lays it out and closes it. Figures are deterministic: a fixed
SVG hash salt and no creation dates, so two builds give the same files.
"""

from __future__ import annotations

import importlib
import pkgutil

from .style import STYLE, use_book_style  # noqa: F401  (re-exported: pages call plots.use_book_style())


def _public_names(module) -> list[str]:
    """The names a figure module offers: its functions and constants not starting with ``_``."""
    return sorted(name for name, value in vars(module).items()
                  if not name.startswith("_") and getattr(value, "__module__", module.__name__) == module.__name__
                  and (callable(value) or name.isupper()))


def _collect() -> dict[str, object]:
    found: dict[str, object] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        for name in _public_names(module):
            if name in found and found[name] is not getattr(module, name):
                raise ImportError(f"attention_graph.plots: {name} is defined by two figure modules")
            found[name] = getattr(module, name)
    return found


_FOUND = _collect()
globals().update(_FOUND)
__all__ = sorted({"STYLE", "use_book_style"} | set(_FOUND))
