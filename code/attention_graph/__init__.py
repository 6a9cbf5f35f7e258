"""attention_graph: the package behind the book "Attention is a graph".

Every public name is importable as ``attention_graph.<name>``. Each module is one concept and has a
chapter of the same stem in ``book/`` and a test file in ``tests/``.

The public names are declared where they are defined: each concept module's ``__all__`` lists the
names the package exports (its chapter's API, documented in ``book/api.md`` and given bad-input rows
in the tests); a module's other helpers are imported from the module by name. This file gathers
every concept module's ``__all__`` by itself, so a new chapter's module needs no edit here. The
modules of the other rooms (``validation``, ``registry``, the presentation modules ``tables``,
``summaries``, ``explorables``, ``plots``, ``citable`` and the benchmarks) are not gathered:
importing the package never loads the presentation or the benchmarks. A name that two modules
export is an error at import.
"""

from __future__ import annotations

import importlib
import pkgutil

from . import worked_example  # first, as always: the package exports this module itself (its data and helpers)
from .registry import DerivationError

# The rooms that are not concept modules (README, "Architecture"): their names are not the package's API.
NOT_CONCEPTS = frozenset({"validation", "registry", "tables", "summaries", "explorables", "plots", "citable", "bench"})


def concept_modules() -> list[str]:
    """The stems of the concept modules, found on the package's path (every module but :data:`NOT_CONCEPTS`)."""
    return sorted(m.name for m in pkgutil.iter_modules(__path__) if m.name not in NOT_CONCEPTS)


def _gather() -> dict[str, object]:
    """{public name: object} of every concept module's ``__all__``, imported before any name is bound."""
    modules = [importlib.import_module(f"{__name__}.{stem}") for stem in concept_modules()]
    found: dict[str, object] = {"DerivationError": DerivationError, "worked_example": worked_example}
    for module in modules:
        for name in module.__all__:
            if name in found:
                raise ImportError(f"attention_graph: {name} is exported twice (again by {module.__name__})")
            found[name] = getattr(module, name)
    return found


# A function named as its module (attention, softmax) replaces the module as the package's attribute,
# as `from .softmax import softmax` did: bound after every module is imported, so no later import undoes it.
_PUBLIC = _gather()
globals().update(_PUBLIC)
__all__ = sorted(_PUBLIC)
__version__ = "0.1.0"
