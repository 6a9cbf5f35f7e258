"""attention_graph: the package behind the book "Attention is a graph".

Every public name is importable as ``attention_graph.<name>``. Each module is one concept and has a
chapter of the same stem in ``book/`` and a test file in ``tests/``.
"""

from . import worked_example  # importing it registers the worked example's SymPy checks
from .attention import AttentionGraph, attention, attention_exact, pull, weighted_sum
from .backward import attention_backward, softmax_backward
from .block import (
                    BlockParams,
                    block_weights,
                    feed_forward,
                    init_block_params,
                    layer_norm,
                    params_from_torch,
                    params_to_torch,
                    transformer_block,
)
from .blockwise import block_state, blockwise_attention, blockwise_attention_backward, merge
from .graph import (
                    additive_mask_softmax,
                    causal_mask,
                    complete_attention,
                    five_models,
                    gat,
                    gat_parameters,
                    gat_scores,
                    gcn,
                    gcn_propagation,
                    graph_mask,
                    masked_attention,
                    mean_aggregation,
                    mean_propagation,
                    message_edge_index,
                    message_passing,
                    permutation_matrix,
                    product_mask_softmax,
                    relabel,
)
from .graph_tools import (
                    attention_rollout,
                    head_graphs,
                    laplacian_spectrum,
                    mean_graph,
                    pagerank,
                    random_walk_laplacian,
                    spectral_bipartition,
                    stationary_distribution,
                    symmetrised,
)
from .induction import composed_graph, head_scores, induction_graph, previous_token_graph
from .karate import adjusted_rand_index, club_graph, graph_transformer_layer
from .multihead import bipartite_adjacency, head_messages, multi_head_attention
from .patterns import (
                    bigbird_edges,
                    causal_edges,
                    complete_edges,
                    hop_distances,
                    longformer_edges,
                    max_path_length,
                    path_edges,
                    window_edges,
)
from .positional import laplacian_pe, normalized_laplacian
from .qkv import project
from .registry import DerivationError
from .scores import scaled_scores
from .sinks import in_degrees, position_in_strength, uniform_causal_weights
from .softmax import hardmax, softmax, softmax_jacobian, softmax_with_temperature
from .sparse import edge_attention, segment_softmax

__all__ = ["AttentionGraph", "DerivationError", "attention", "attention_exact", "hardmax", "project",
           "pull", "scaled_scores", "softmax", "softmax_jacobian", "softmax_with_temperature",
           "weighted_sum"]
__all__ += ["additive_mask_softmax", "causal_mask", "complete_attention", "five_models", "gat",
            "gat_parameters", "gat_scores", "gcn", "gcn_propagation", "graph_mask",
            "masked_attention", "mean_aggregation", "mean_propagation", "message_edge_index", "message_passing",
            "permutation_matrix", "product_mask_softmax", "relabel"]
__all__ += ["worked_example"]
__all__ += ["adjusted_rand_index", "attention_rollout", "club_graph", "graph_transformer_layer",
            "head_graphs", "laplacian_spectrum", "mean_graph", "pagerank",
            "random_walk_laplacian", "spectral_bipartition", "stationary_distribution", "symmetrised"]
__all__ += ["block_state", "blockwise_attention", "merge"]
__all__ += ["laplacian_pe", "normalized_laplacian", "edge_attention", "segment_softmax"]
__all__ += ["attention_backward", "blockwise_attention_backward", "softmax_backward"]
__all__ += ["bipartite_adjacency", "head_messages", "multi_head_attention"]
__all__ += ["BlockParams", "block_weights", "feed_forward", "init_block_params", "layer_norm",
            "params_from_torch", "params_to_torch", "transformer_block"]
__all__ += ["bigbird_edges", "causal_edges", "complete_edges", "hop_distances", "longformer_edges",
            "max_path_length", "path_edges", "window_edges"]
__all__ += ["in_degrees", "position_in_strength", "uniform_causal_weights"]
__all__ += ["composed_graph", "head_scores", "induction_graph", "previous_token_graph"]
__version__ = "0.1.0"
