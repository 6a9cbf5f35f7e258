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
from .bottlenecks import (
    causal_path_counts,
    causal_stack,
    init_causal_stack,
    last_token_sensitivity,
    path_share,
    uniform_walk_share,
)
from .decoding import KVCache, decode
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
from .language_model import (
    GPT2,
    gpt2_config,
    gpt2_forward,
    gpt2_grads,
    gpt2_loss,
    init_gpt2,
    load_gpt2,
    save_gpt2,
    train_gpt2,
)
from .linear_attention import RandomFeatures, elu_feature_map, linear_attention, linear_weights, random_features
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
from .rank_collapse import distance_from_rank_one, ergodicity_coefficient, product_coefficients, row_spread
from .registry import DerivationError
from .scores import scaled_scores
from .sequence_positions import alibi_bias, distance_bias, rotary, shortest_path_distances, sinusoidal_encoding
from .sinks import in_degrees, position_in_strength, uniform_causal_weights
from .softmax import hardmax, softmax, softmax_jacobian, softmax_with_temperature
from .sparse import edge_attention, segment_softmax

# Every public name, once (tests/test_packaging.py checks it against the imports above).
__all__ = ["AttentionGraph", "BlockParams", "DerivationError", "GPT2", "KVCache", "RandomFeatures",
           "additive_mask_softmax", "adjusted_rand_index", "alibi_bias", "attention", "attention_backward",
           "attention_exact", "attention_rollout", "bigbird_edges", "bipartite_adjacency", "block_state",
           "block_weights", "blockwise_attention", "blockwise_attention_backward", "causal_edges", "causal_mask",
           "causal_path_counts", "causal_stack", "club_graph", "complete_attention", "complete_edges",
           "composed_graph", "decode", "distance_bias", "distance_from_rank_one", "edge_attention",
           "elu_feature_map", "ergodicity_coefficient", "feed_forward", "five_models", "gat", "gat_parameters",
           "gat_scores", "gcn", "gcn_propagation", "gpt2_config", "gpt2_forward", "gpt2_grads", "gpt2_loss",
           "graph_mask", "graph_transformer_layer", "hardmax", "head_graphs", "head_messages", "head_scores",
           "hop_distances", "in_degrees", "induction_graph", "init_block_params", "init_causal_stack", "init_gpt2",
           "laplacian_pe", "laplacian_spectrum", "last_token_sensitivity", "layer_norm", "linear_attention",
           "linear_weights", "load_gpt2", "longformer_edges", "masked_attention", "max_path_length",
           "mean_aggregation", "mean_graph", "mean_propagation", "merge", "message_edge_index", "message_passing",
           "multi_head_attention", "normalized_laplacian", "pagerank", "params_from_torch", "params_to_torch",
           "path_edges", "path_share", "permutation_matrix", "position_in_strength", "previous_token_graph",
           "product_coefficients", "product_mask_softmax", "project", "pull", "random_features",
           "random_walk_laplacian", "relabel", "rotary", "row_spread", "save_gpt2", "scaled_scores",
           "segment_softmax", "shortest_path_distances", "sinusoidal_encoding", "softmax", "softmax_backward",
           "softmax_jacobian", "softmax_with_temperature", "spectral_bipartition", "stationary_distribution",
           "symmetrised", "train_gpt2", "transformer_block", "uniform_causal_weights", "uniform_walk_share",
           "weighted_sum", "window_edges", "worked_example"]
__version__ = "0.1.0"
