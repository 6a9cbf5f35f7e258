"""attention_graph: the package behind the book "Attention is a graph".

Every public name is importable as ``attention_graph.<name>``. Each module is one concept and has a
chapter of the same stem in ``book/`` and a test file in ``tests/``.
"""

from .attention import attention, weighted_sum
from .graph import AttentionGraph
from .graph_tools import (attention_rollout, head_graphs, laplacian_spectrum, mean_graph,
                          multi_head_attention, pagerank, random_walk_laplacian, spectral_bipartition,
                          stationary_distribution, symmetrised)
from .karate import adjusted_rand_index, club_graph, graph_transformer_layer
from .registry import DerivationError
from .scores import scaled_scores
from .softmax import softmax

__all__ = ["AttentionGraph", "DerivationError", "attention", "scaled_scores", "softmax",
           "weighted_sum"]
__all__ += ["adjusted_rand_index", "attention_rollout", "club_graph", "graph_transformer_layer",
            "head_graphs", "laplacian_spectrum", "mean_graph", "multi_head_attention", "pagerank",
            "random_walk_laplacian", "spectral_bipartition", "stationary_distribution", "symmetrised"]
__version__ = "0.1.0"
