"""attention_graph: the package behind the book "Attention is a graph".

Every public name is importable as ``attention_graph.<name>``. Each module is one concept and has a
chapter of the same stem in ``book/`` and a test file in ``tests/``.
"""

from .attention import attention, attention_exact, pull, weighted_sum
from .graph import AttentionGraph
from .qkv import project
from .registry import DerivationError
from .scores import scaled_scores
from .softmax import hardmax, softmax, softmax_jacobian, softmax_with_temperature

__all__ = ["AttentionGraph", "DerivationError", "attention", "attention_exact", "hardmax", "project",
           "pull", "scaled_scores", "softmax", "softmax_jacobian", "softmax_with_temperature",
           "weighted_sum"]
__version__ = "0.1.0"
