"""attention_graph: the package behind the book "Attention is a graph".

Every public name is importable as ``attention_graph.<name>``. Each module is one concept and has a
chapter of the same stem in ``book/`` and a test file in ``tests/``.
"""

from .attention import attention, weighted_sum
from .blockwise import block_state, blockwise_attention, merge
from .graph import AttentionGraph
from .registry import DerivationError
from .scores import scaled_scores
from .softmax import softmax

__all__ = ["AttentionGraph", "DerivationError", "attention", "scaled_scores", "softmax",
           "weighted_sum", "block_state", "blockwise_attention", "merge"]
__version__ = "0.1.0"
