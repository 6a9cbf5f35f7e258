"""Bad input to every public function: a clear error naming the argument, never a silent wrong answer.

The table lists each bad input and the error it must raise. The rows are grouped by function; every
function of the public API appears (``test_every_public_function_is_in_the_table``). A chapter keeps
its rows in its own test file, ``tests/test_<stem>.py``, as a list ``BAD`` of the same form; they are
gathered here.
"""

import subprocess
import sys

import numpy as np
import pytest

import attention_graph as ag
import booktools as bt
from attention_graph import validation
from attention_graph.softmax import raw_score_row
from attention_graph.tables import explorable_data

ok = np.ones((3, 2))  # (n, d), a valid Q, K or V
nan = np.array([[0.0, np.nan], [1.0, 1.0], [2.0, 2.0]])
inf = np.array([[0.0, 1.0], [np.inf, 1.0], [2.0, 2.0]])
cplx = np.ones((3, 2), dtype=complex)
strs = np.full((3, 2), "a")
objs = np.full((3, 2), None, dtype=object)
all_true = np.ones((3, 3), dtype=bool)
path = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 1.0], [0.0, 1.0, 0.0]])  # (n, n), a path on 3 nodes
I2, I3 = np.eye(2), np.eye(3)  # identity projections, d_model = 2 and 3
empty_row = np.array([[True, True, True], [False, False, False], [True, False, False]])

# (function name, call, error type, message fragment)
BAD = [
    ("scaled_scores", lambda: ag.scaled_scores(ok, np.ones((3, 4))), ValueError, "share the dimension d"),
    ("scaled_scores", lambda: ag.scaled_scores(ok[0], ok), ValueError, "Q must be a 2-d array"),
    ("scaled_scores", lambda: ag.scaled_scores(nan, ok), ValueError, r"Q must be finite; found nan at index \(0, 1\)"),
    ("scaled_scores", lambda: ag.scaled_scores(ok, inf), ValueError, r"K must be finite; found inf at index \(1, 0\)"),
    ("scaled_scores", lambda: ag.scaled_scores(cplx, ok), TypeError, "Q must hold real numbers; got dtype complex128"),
    ("scaled_scores", lambda: ag.scaled_scores(ok, strs), TypeError, "K must hold real numbers"),
    ("scaled_scores", lambda: ag.scaled_scores(objs, ok), TypeError, "Q must hold real numbers; got dtype object"),
    ("scaled_scores", lambda: ag.scaled_scores([[1.0], [1.0, 2.0]], ok), ValueError, "Q must be a rectangular"),
    ("scaled_scores", lambda: ag.scaled_scores(np.ones((2, 0)), np.ones((2, 0))), ValueError, "d = 0"),
    ("scaled_scores", lambda: ag.scaled_scores(ok * 1e200, ok * 1e200), ValueError, "overflowed"),
    ("softmax", lambda: ag.softmax(ok[0]), ValueError, "S must be a 2-d array"),
    ("softmax", lambda: ag.softmax(nan), ValueError, "S must be finite"),
    ("softmax", lambda: ag.softmax(np.ones((3, 3)), empty_row), ValueError, r"mask allows no key in row\(s\) \[1\]"),
    ("softmax", lambda: ag.softmax(np.ones((3, 3)), np.ones((3, 3))), TypeError, "mask must be a boolean array"),
    ("softmax", lambda: ag.softmax(np.ones((3, 3)), np.ones((3, 2), bool)), ValueError, r"mask must have shape \(3, 3\)"),
    ("softmax", lambda: ag.softmax(np.ones((2, 0))), ValueError, "no columns"),
    # −∞ is a masked entry (PyTorch's way); a row of −∞ only, +∞ and NaN are still refused.
    ("softmax", lambda: ag.softmax([[0.0, 1.0], [-np.inf, -np.inf]]), ValueError,
     r"S allows no key in row\(s\) \[1\]: every entry is -inf \(masked\)"),
    ("softmax", lambda: ag.softmax([[0.0, -np.inf]], mask=np.array([[False, True]])), ValueError,
     r"S allows no key in row\(s\) \[0\]: every entry is -inf or masked by mask"),
    ("softmax", lambda: ag.softmax([[0.0, np.inf]]), ValueError,
     r"S must be finite or -inf \(a masked entry\); found inf at index \(0, 1\)"),
    ("softmax", lambda: ag.softmax([[-np.inf, np.nan]]), ValueError, r"S must be finite or -inf .*found nan"),
    ("hardmax", lambda: ag.hardmax([[-np.inf, -np.inf]]), ValueError, r"S allows no key in row\(s\) \[0\]"),
    ("weighted_sum", lambda: ag.weighted_sum(np.ones((3, 4)), ok), ValueError, "W must have one column per row of V"),
    ("weighted_sum", lambda: ag.weighted_sum(np.ones((3, 3)), inf), ValueError, "V must be finite"),
    ("attention", lambda: ag.attention(ok, ok, np.ones((4, 2))), ValueError, "K and V must have the same number of rows"),
    ("attention", lambda: ag.attention(ok, ok, nan), ValueError, "V must be finite"),
    ("attention", lambda: ag.attention(ok, ok, ok, empty_row), ValueError, "mask allows no key"),
    ("attention", lambda: ag.attention(ok, ok, cplx), TypeError, "V must hold real numbers"),
    ("project", lambda: ag.project(ok, np.ones((3, 2)), np.ones((2, 2)), np.ones((2, 2))), ValueError, "W_Q must have one row per column of X"),
    ("project", lambda: ag.project(ok, np.ones((2, 2)), np.ones((2, 3)), np.ones((2, 2))), ValueError, "W_Q and W_K must have the same number of columns"),
    ("project", lambda: ag.project(nan, np.ones((2, 2)), np.ones((2, 2)), np.ones((2, 2))), ValueError, "X must be finite"),
    ("softmax_with_temperature", lambda: ag.softmax_with_temperature(ok, 0.0), ValueError, "tau must be > 0"),
    ("softmax_with_temperature", lambda: ag.softmax_with_temperature(nan, 1.0), ValueError, "S must be finite"),
    ("softmax_with_temperature", lambda: ag.softmax_with_temperature([[-np.inf]], float("inf")), ValueError,
     r"S allows no key in row\(s\) \[0\]"),
    ("hardmax", lambda: ag.hardmax(np.ones((3, 3)), empty_row), ValueError, "mask allows no key"),
    ("hardmax", lambda: ag.hardmax(cplx), TypeError, "S must hold real numbers"),
    ("softmax_jacobian", lambda: ag.softmax_jacobian([0.2, 0.2]), ValueError, "p must sum to 1"),
    ("softmax_jacobian", lambda: ag.softmax_jacobian(ok), ValueError, "p must be one row"),
    ("pull", lambda: ag.pull(np.ones((3, 2)) / 2, ok), ValueError, "W must be square"),
    ("pull", lambda: ag.pull(np.ones((3, 3)), ok), ValueError, "every row of W must sum to 1"),
    ("attention_exact", lambda: ag.attention_exact([[1, 0]], [[1, 0, 0]], [[1]]), ValueError, "share the dimension d"),
    ("attention_exact", lambda: ag.attention_exact([[1, 0]], [[1, 0]], [[1], [2]]), ValueError, "same number of rows"),
    ("blockwise_attention", lambda: ag.blockwise_attention(ok, ok, ok, 0), ValueError, "block_size must be a positive integer"),
    ("blockwise_attention", lambda: ag.blockwise_attention(ok, ok, ok, 2.0), TypeError, "block_size must be a positive integer"),
    ("blockwise_attention", lambda: ag.blockwise_attention(ok, ok, ok, True), TypeError, "got True of type bool"),
    ("blockwise_attention", lambda: ag.blockwise_attention(ok, ok, nan, 2), ValueError, "V must be finite"),
    ("blockwise_attention", lambda: ag.blockwise_attention(ok, ok, np.ones((4, 2)), 2), ValueError, "K and V must have the same number of rows"),
    ("blockwise_attention", lambda: ag.blockwise_attention(ok, np.ones((0, 2)), np.ones((0, 2)), 2), ValueError, "K has no rows"),
    ("attention_backward", lambda: ag.attention_backward(ok, ok, ok, np.ones((3, 3))), ValueError, r"dY must have the shape of Y"),
    ("attention_backward", lambda: ag.attention_backward(ok, ok, ok, nan), ValueError, "dY must be finite"),
    ("attention_backward", lambda: ag.attention_backward(ok, ok, ok, cplx), TypeError, "dY must hold real numbers"),
    ("attention_backward", lambda: ag.attention_backward(ok, ok, np.ones((4, 2)), ok), ValueError, "K and V must have the same number of rows"),
    ("attention_backward", lambda: ag.attention_backward(ok, ok, ok, ok, empty_row), ValueError, "mask allows no key"),
    ("attention_backward", lambda: ag.attention_backward(ok, ok, ok, ok, np.ones((3, 3))), TypeError, "mask must be a boolean array"),
    ("blockwise_attention_backward", lambda: ag.blockwise_attention_backward(ok, ok, ok, ok, 0), ValueError, "block_size must be a positive integer"),
    ("blockwise_attention_backward", lambda: ag.blockwise_attention_backward(ok, ok, ok, ok, 1.5), TypeError, "block_size must be a positive integer"),
    ("blockwise_attention_backward", lambda: ag.blockwise_attention_backward(ok, ok, ok, ok[:2], 2), ValueError, "dY must have the shape of Y"),
    ("blockwise_attention_backward", lambda: ag.blockwise_attention_backward(ok, ok, ok, inf, 2), ValueError, "dY must be finite"),
    ("blockwise_attention_backward", lambda: ag.blockwise_attention_backward(ok, np.ones((0, 2)), np.ones((0, 2)), ok, 2), ValueError, "K has no rows"),
    ("softmax_backward", lambda: ag.softmax_backward(np.ones((2, 3)), np.ones((2, 2))), ValueError, "dW must have the shape of W"),
    ("softmax_backward", lambda: ag.softmax_backward(nan, ok), ValueError, "W must be finite"),
    ("softmax_backward", lambda: ag.softmax_backward(ok[0], ok), ValueError, "W must be a 2-d array"),
    ("block_state", lambda: ag.block_state(ok, np.ones((3, 2))), ValueError, "S must have one column per row of V"),
    ("block_state", lambda: ag.block_state(inf, np.ones((2, 2))), ValueError, "S must be finite"),
    ("merge", lambda: ag.merge((0.0, 1.0, ok), (0.0, 1.0, ok)), TypeError, "a must be a BlockState"),
    ("AttentionGraph", lambda: ag.AttentionGraph(np.ones((2, 3)), ["a", "b"]), ValueError, "W must be square"),
    # The graph chapter's models
    ("graph_mask", lambda: ag.graph_mask(np.ones((2, 3))), ValueError, "A must be square"),
    ("causal_mask", lambda: ag.causal_mask(-1), ValueError, "n must be a positive integer"),
    ("causal_mask", lambda: ag.causal_mask(2.5), TypeError, "n must be a positive integer"),
    ("message_passing", lambda: ag.message_passing(ag.AttentionGraph(np.eye(3), "abc"), np.ones((4, 2))), ValueError, "V must have one row per node"),
    ("message_passing", lambda: ag.message_passing(np.eye(3), ok), TypeError, "graph must be an AttentionGraph"),
    ("message_edge_index", lambda: ag.message_edge_index(np.eye(3)), TypeError, "graph must be an AttentionGraph"),
    ("gcn_propagation", lambda: ag.gcn_propagation(-path), ValueError, "A must be non-negative"),
    ("mean_propagation", lambda: ag.mean_propagation(np.ones((2, 3))), ValueError, "A must be square"),
    ("gcn", lambda: ag.gcn(path, np.ones((4, 2))), ValueError, "one row per node"),
    ("mean_aggregation", lambda: ag.mean_aggregation(path, nan), ValueError, "X must be finite"),
    ("gat_parameters", lambda: ag.gat_parameters(2, 2, rng=0), TypeError, "rng must be a numpy.random.Generator"),
    ("gat_parameters", lambda: ag.gat_parameters(0, 2, np.random.default_rng(0)), ValueError, "d_in must be a positive integer"),
    ("gat_scores", lambda: ag.gat_scores(ok, np.ones((3, 2)), np.ones(4)), ValueError, "X and Theta must share d_in"),
    ("gat", lambda: ag.gat(path, ok, np.ones((2, 2)), np.ones(3)), ValueError, "a must have 2 d_out entries"),
    ("complete_attention", lambda: ag.complete_attention(ok, ok, ok, labels="ab"), ValueError, "labels must name the 3 nodes"),
    ("masked_attention", lambda: ag.masked_attention(ok, ok, ok, np.ones((2, 2))), ValueError, r"mask must have shape \(3, 3\)"),
    ("masked_attention", lambda: ag.masked_attention(ok, ok, ok, np.zeros((3, 3)), self_loops=False), ValueError, "have no neighbour"),
    ("additive_mask_softmax", lambda: ag.additive_mask_softmax(np.ones((3, 3)), np.ones((3, 3))), TypeError, "mask must be a boolean array"),
    ("product_mask_softmax", lambda: ag.product_mask_softmax(np.ones((3, 3)), np.ones((3, 2), bool)), TypeError, "mask must be a boolean array of shape"),
    ("permutation_matrix", lambda: ag.permutation_matrix([0, 0, 1]), ValueError, "order must be a permutation"),
    ("relabel", lambda: ag.relabel(ag.AttentionGraph(np.eye(3), "abc"), [0, 1]), ValueError, "order must permute the 3 nodes"),
    ("five_models", lambda: ag.five_models(ok, path, rng=1), TypeError, "rng must be a numpy.random.Generator"),
    # Graph tools and the karate club
    ("adjusted_rand_index", lambda: ag.adjusted_rand_index([0, 1], [0, 1, 1]), ValueError, "a and b must label the same nodes"),
    ("attention_rollout", lambda: ag.attention_rollout([]), ValueError, "layers is empty"),
    ("attention_rollout", lambda: ag.attention_rollout([ag.AttentionGraph(np.eye(3), "abc"), ag.AttentionGraph(np.eye(2), "ab")]), ValueError, "every graph must be on the same nodes"),
    ("club_graph", lambda: ag.club_graph(3), TypeError, "positional argument"),
    ("graph_transformer_layer", lambda: ag.graph_transformer_layer(np.ones((3, 3)), np.ones((4, 2)), {}, 2), ValueError, "P must have one row per node of A"),
    ("head_graphs", lambda: ag.head_graphs(np.ones((3, 4)), np.ones((3, 4)), 3, "abc"), ValueError, "not divisible into n_heads = 3"),
    ("laplacian_spectrum", lambda: ag.laplacian_spectrum(np.ones((2, 3))), ValueError, "must be a square matrix"),
    ("mean_graph", lambda: ag.mean_graph([]), ValueError, "graphs is empty"),
    ("pagerank", lambda: ag.pagerank(np.eye(3), damping=1.5), ValueError, r"damping must be in \[0, 1\)"),
    ("pagerank", lambda: ag.pagerank(np.full((2, 2), 0.7)), ValueError, "row-stochastic"),
    ("random_walk_laplacian", lambda: ag.random_walk_laplacian(-np.ones((2, 2))), ValueError, "non-negative"),
    ("spectral_bipartition", lambda: ag.spectral_bipartition(np.full((2, 2), np.nan)), ValueError, "must be finite"),
    ("stationary_distribution", lambda: ag.stationary_distribution(np.ones((2, 3))), ValueError, "must be a square matrix"),
    ("symmetrised", lambda: ag.symmetrised(strs), TypeError, "must hold real numbers"),
    ("AttentionGraph", lambda: ag.AttentionGraph(np.ones((2, 2)), ["a"]), ValueError, "labels must name the 2 nodes"),
    ("AttentionGraph", lambda: ag.AttentionGraph(-np.ones((2, 2)), ["a", "b"]), ValueError, "non-negative"),
    ("AttentionGraph", lambda: ag.AttentionGraph(np.full((2, 2), np.nan), ["a", "b"]), ValueError, "W must be finite"),
    ("edge_attention", lambda: ag.edge_attention(ok, ok, ok, [[0, 0], [2, 2]]), ValueError, "no edge to query"),
    ("edge_attention", lambda: ag.edge_attention(ok, ok, ok, [[0, 0], [1, 3], [2, 2]]), ValueError, "outside 0..2"),
    ("edge_attention", lambda: ag.edge_attention(ok, ok, ok, [[0, 0], [1, 1], [2, 2], [0, 0]]), ValueError, "same edge"),
    ("edge_attention", lambda: ag.edge_attention(ok, ok, ok, [[0.0, 0.0]]), TypeError, "integer array"),
    ("edge_attention", lambda: ag.edge_attention(ok, ok, nan, [[0, 0], [1, 1], [2, 2]]), ValueError, "V must be finite"),
    ("segment_softmax", lambda: ag.segment_softmax([1.0, 2.0], [0, 0, 2]), ValueError, "increase strictly"),
    ("segment_softmax", lambda: ag.segment_softmax([1.0, np.nan], [0, 2]), ValueError, "s must be finite"),
    ("normalized_laplacian", lambda: ag.normalized_laplacian(np.array([[0, 1], [0, 0]])), ValueError, "symmetric"),
    ("normalized_laplacian", lambda: ag.normalized_laplacian(ok), ValueError, "square"),
    ("laplacian_pe", lambda: ag.laplacian_pe(np.array([[0, 1], [1, 0]]), 2), ValueError, "k must be an integer"),
    # Multi-head attention, the block, the patterns
    ("multi_head_attention", lambda: ag.multi_head_attention(ok, ok, I2, I2, I2, I2, 0), ValueError, "n_heads must be a positive integer"),
    ("multi_head_attention", lambda: ag.multi_head_attention(ok, ok, I2, I2, I2, I2, 2.0), TypeError, "n_heads must be a positive integer"),
    ("multi_head_attention", lambda: ag.multi_head_attention(np.ones((3, 3)), np.ones((3, 3)), I3, I3, I3, I3, 2), ValueError, "not divisible into n_heads = 2"),
    ("multi_head_attention", lambda: ag.multi_head_attention(ok, np.ones((4, 3)), I2, I2, I2, I2, 1), ValueError, "X_q and X_kv must share d_model"),
    ("multi_head_attention", lambda: ag.multi_head_attention(ok, ok, I2, I2, I2, np.ones((2, 3)), 1), ValueError, r"W_O must have shape \(d_model, d_model\)"),
    ("multi_head_attention", lambda: ag.multi_head_attention(nan, ok, I2, I2, I2, I2, 1), ValueError, "X_q must be finite"),
    ("multi_head_attention", lambda: ag.multi_head_attention(ok, ok, I2, I2, I2, I2, 1, mask=np.ones((3, 3))), TypeError, "mask must be a boolean array"),
    ("head_messages", lambda: ag.head_messages(ok, ok, I2, I2, cplx[:2], I2, 1), TypeError, "W_V must hold real numbers"),
    ("bipartite_adjacency", lambda: ag.bipartite_adjacency(-ok), ValueError, "W must be non-negative"),
    ("bipartite_adjacency", lambda: ag.bipartite_adjacency(ok[0]), ValueError, "W must be a 2-d array"),
    ("BlockParams", lambda: ag.BlockParams(W_Q=I2), TypeError, "missing"),
    ("transformer_block", lambda: ag.transformer_block(ok, {"W_Q": I2}), TypeError, "params must be a BlockParams"),
    ("transformer_block", lambda: ag.transformer_block(np.ones((3, 3)), _params()), ValueError, "X must have d = 2 columns"),
    ("transformer_block", lambda: ag.transformer_block(ok, _params(), norm_first=1), TypeError, "norm_first must be True"),
    ("transformer_block", lambda: ag.transformer_block(ok, _params(b_1=np.ones(3))), ValueError, r"params.b_1 must have shape \(4,\)"),
    ("transformer_block", lambda: ag.transformer_block(ok, _params(n_heads=3)), ValueError, "not divisible into n_heads = 3"),
    ("transformer_block", lambda: ag.transformer_block(inf, _params()), ValueError, "X must be finite"),
    ("block_weights", lambda: ag.block_weights(ok, _params(), norm_first="pre"), TypeError, "norm_first must be True"),
    ("block_weights", lambda: ag.block_weights(ok, _params(), mask=np.ones((3, 3))), TypeError, "mask must be a boolean array"),
    ("params_to_torch", lambda: ag.params_to_torch({"W_Q": I2}), TypeError, "params must be a BlockParams"),
    ("layer_norm", lambda: ag.layer_norm(ok, np.ones(3), np.zeros(2)), ValueError, r"gamma must be a vector of shape \(2,\)"),
    ("layer_norm", lambda: ag.layer_norm(ok, np.ones(2), np.zeros(2), eps=-1.0), ValueError, "eps must be a real number >= 0"),
    ("layer_norm", lambda: ag.layer_norm(ok, np.ones(2), np.zeros(2), eps=0.0), ValueError, "constant and eps = 0"),
    ("feed_forward", lambda: ag.feed_forward(ok, np.ones((3, 4)), np.zeros(4), np.ones((4, 2)), np.zeros(2)), ValueError, "W_1 must have one row per column of X"),
    ("feed_forward", lambda: ag.feed_forward(ok, np.ones((2, 4)), np.zeros(4), np.ones((4, 3)), np.zeros(2)), ValueError, r"W_2 must have shape \(d_ff, d\)"),
    ("params_from_torch", lambda: ag.params_from_torch({}, 1), ValueError, "state lacks"),
    ("params_from_torch", lambda: ag.params_from_torch([], 1), TypeError, "state must be a dict"),
    ("params_from_torch", lambda: ag.params_from_torch(_torch_state(in_bias=1.0), 1), ValueError, "in_proj_bias.*is not zero"),
    ("params_from_torch", lambda: ag.params_from_torch(_torch_state(), 3), ValueError, "not divisible into n_heads = 3"),
    ("init_block_params", lambda: ag.init_block_params(4, 8, 3, np.random.default_rng(0)), ValueError, "not divisible into n_heads = 3"),
    ("init_block_params", lambda: ag.init_block_params(4, 8, 2, 0), TypeError, "rng must be a numpy.random.Generator"),
    ("complete_edges", lambda: ag.complete_edges(0), ValueError, "n must be an integer >= 1"),
    ("causal_edges", lambda: ag.causal_edges(2.0), TypeError, "n must be an integer"),
    ("path_edges", lambda: ag.path_edges(-3), ValueError, "n must be an integer >= 1"),
    ("window_edges", lambda: ag.window_edges(5, -1), ValueError, "w must be an integer >= 0"),
    ("longformer_edges", lambda: ag.longformer_edges(5, 1, 6), ValueError, "n_global = 6 exceeds"),
    ("bigbird_edges", lambda: ag.bigbird_edges(5, 1, 1, 2, seed=None), TypeError, "seed must be an integer"),
    ("bigbird_edges", lambda: ag.bigbird_edges(5, 1, 1, -2, seed=0), ValueError, "n_random must be an integer >= 0"),
    ("hop_distances", lambda: ag.hop_distances([[0, 3]], 3), ValueError, "outside 0..2"),
    ("hop_distances", lambda: ag.hop_distances([[0.0, 1.0]], 3), TypeError, "integer array"),
    ("max_path_length", lambda: ag.max_path_length([[0, 0]], 1, n_layers=0), ValueError, "n_layers must be an integer >= 1"),
    ("fixed_to_computed", lambda: ag.graph.fixed_to_computed(ok, path, 2.5), ValueError, r"t must be in \[0, 2\]"),
    ("fixed_to_computed", lambda: ag.graph.fixed_to_computed(ok, path, "1"), TypeError, "t must be a real number"),
    ("fixed_to_computed", lambda: ag.graph.fixed_to_computed(ok, np.ones((2, 2)), 1.0), ValueError, "one row per row of X"),
    ("raw_score_row", lambda: raw_score_row(0, 3, np.random.default_rng(0)), ValueError, "d must be"),
    ("raw_score_row", lambda: raw_score_row(2, 3, 0), TypeError, "rng"),
    ("explorable_data", lambda: explorable_data("a b", {}), ValueError, "name must be letters"),
    ("explorable_data", lambda: explorable_data("a", [1]), TypeError, "state must be a dict"),
    ("explorable_data", lambda: explorable_data("a", {"x": float("nan")}), ValueError, "Out of range"),
    # Sequences as graphs: the bias of attention, positions, linear attention, decoding
    ("attention", lambda: ag.attention(ok, ok, ok, bias=np.ones((3, 2))), ValueError, r"bias must have shape \(3, 3\) \(n_q, n_k\)"),
    ("attention", lambda: ag.attention(ok, ok, ok, bias=all_true), TypeError, "bias must be a float array.*Pass a boolean mask as mask="),
    ("attention", lambda: ag.attention(ok, ok, ok, bias=np.full((3, 3), np.nan)), ValueError, r"bias must be finite or -inf \(a masked entry\); found nan"),
    ("attention", lambda: ag.attention(ok, ok, ok, bias=np.full((3, 3), np.inf)), ValueError, "bias must be finite or -inf.*found inf"),
    ("attention", lambda: ag.attention(ok, ok, ok, bias=np.where(empty_row, 0.0, -np.inf)), ValueError, r"bias is -inf in every entry of row\(s\) \[1\]"),
    ("attention", lambda: ag.attention(ok, ok, ok, mask=empty_row, bias=np.zeros((3, 3))), ValueError, "mask allows no key"),
    ("attention", lambda: ag.attention(ok, ok, ok, mask=~np.eye(3, dtype=bool), bias=np.where(np.eye(3) > 0, 0.0, -np.inf)), ValueError, r"S allows no key in row\(s\) \[0, 1, 2\]: every entry is -inf or masked by mask"),
    ("attention", lambda: ag.attention(ok * 7e307, ok, ok, bias=np.full((3, 3), 1.7e308)), ValueError, r"the scores plus bias overflowed float64 at index \(0, 0\)"),
    ("attention", lambda: ag.attention(ok, ok, ok, bias=np.ones((3, 3), dtype=complex)), TypeError, "bias must hold real numbers"),
    ("sinusoidal_encoding", lambda: ag.sinusoidal_encoding(4, 3), ValueError, "d must be an even integer"),
    ("sinusoidal_encoding", lambda: ag.sinusoidal_encoding(0, 4), ValueError, "n must be a positive integer"),
    ("sinusoidal_encoding", lambda: ag.sinusoidal_encoding(4, 4, base=1.0), ValueError, "base must be a finite real number > 1"),
    ("sinusoidal_encoding", lambda: ag.sinusoidal_encoding(4, 4, base="10000"), TypeError, "base must be a real number"),
    ("rotary", lambda: ag.rotary(np.ones((3, 3)), [0, 1, 2]), ValueError, "X's number of columns d must be an even integer"),
    ("rotary", lambda: ag.rotary(ok, [0, 1]), ValueError, "positions must have one entry per row of X: 2 != 3"),
    ("rotary", lambda: ag.rotary(ok, [[0, 1, 2]]), ValueError, "positions must be a 1-d array"),
    ("rotary", lambda: ag.rotary(ok, [0, np.nan, 2]), ValueError, "positions must be finite"),
    ("rotary", lambda: ag.rotary(nan, [0, 1, 2]), ValueError, "X must be finite"),
    ("alibi_bias", lambda: ag.alibi_bias(4, -0.5), ValueError, "slope must be a finite real number >= 0"),
    ("alibi_bias", lambda: ag.alibi_bias(4, np.inf), ValueError, "slope must be a finite real number >= 0"),
    ("alibi_bias", lambda: ag.alibi_bias(4, None), TypeError, "slope must be a real number"),
    ("alibi_bias", lambda: ag.alibi_bias(2.5, 0.5), TypeError, "n must be a positive integer"),
    ("shortest_path_distances", lambda: ag.shortest_path_distances(np.ones((2, 3))), ValueError, "A must be square"),
    ("shortest_path_distances", lambda: ag.shortest_path_distances(-path), ValueError, "A must be non-negative"),
    ("distance_bias", lambda: ag.distance_bias(path, -1.0), ValueError, "slope must be a finite real number >= 0"),
    ("distance_bias", lambda: ag.distance_bias(np.full((2, 2), np.nan), 1.0), ValueError, "A must be finite"),
    ("elu_feature_map", lambda: ag.elu_feature_map(nan), ValueError, "X must be finite"),
    ("linear_attention", lambda: ag.linear_attention(ok, ok, np.ones((4, 2))), ValueError, "K and V must have the same number of rows"),
    ("linear_attention", lambda: ag.linear_attention(ok, ok, ok, feature_map="elu"), TypeError, "feature_map must be callable"),
    ("linear_attention", lambda: ag.linear_attention(ok, ok, ok, feature_map=lambda X: -X), ValueError, r"feature_map\(K\) must be non-negative"),
    ("linear_attention", lambda: ag.linear_attention(ok, ok, ok, feature_map=lambda X: X[:2]), ValueError, r"feature_map\(K\) must be an array \(n, F\) with one row per row of K"),
    ("linear_attention", lambda: ag.linear_attention(ok, ok, ok, feature_map=lambda X: np.where(X > 0, np.inf, 1.0)), ValueError, r"feature_map\(K\) must be finite"),
    ("linear_attention", lambda: ag.linear_attention(ok, ok, ok, feature_map=lambda X: np.zeros_like(X)), ValueError, "the normaliser .* of row 0 is 0"),
    ("linear_attention", lambda: ag.linear_attention(ok, np.ones((2, 2)), np.ones((2, 2)), causal=True), ValueError, r"causal needs one query per key \(n_q = n_k\): 3 != 2"),
    ("linear_attention", lambda: ag.linear_attention(ok, ok, ok, causal="yes"), TypeError, "causal must be True or False"),
    ("linear_attention", lambda: ag.linear_attention(ok, np.ones((0, 2)), np.ones((0, 2))), ValueError, "K has no rows"),
    ("linear_weights", lambda: ag.linear_weights(ok, np.ones((3, 4)), feature_map=lambda X: X**2 + 1), ValueError, "feature_map must give Q and K the same number F of features: 2 != 4"),
    ("linear_weights", lambda: ag.linear_weights(inf, ok), ValueError, "Q must be finite"),
    ("random_features", lambda: ag.random_features(4, 0, np.random.default_rng(0)), ValueError, "F must be a positive integer"),
    ("random_features", lambda: ag.random_features(4, 8, 0), TypeError, "rng must be a numpy.random.Generator"),
    ("RandomFeatures", lambda: ag.RandomFeatures(np.ones(3)), ValueError, "Xi must be a 2-d array"),
    ("RandomFeatures", lambda: ag.RandomFeatures(np.ones((4, 2)))(np.ones((3, 3))), ValueError, "X must have d = 2 columns, as Xi"),
    ("KVCache", lambda: ag.KVCache().attend([1.0, 0.0]), ValueError, "the cache is empty"),
    ("KVCache", lambda: _cache().append([1.0, 0.0, 0.0], [1.0]), ValueError, "k must have 2 entries, as the cached ones"),
    ("KVCache", lambda: _cache().append([1.0, 0.0], [1.0, 2.0]), ValueError, "v must have 1 entries"),
    ("KVCache", lambda: _cache().attend([[1.0, 0.0]]), ValueError, "q must be one vector"),
    ("KVCache", lambda: _cache().attend([np.nan, 0.0]), ValueError, "q must be finite"),
    ("KVCache", lambda: ag.KVCache().append([], []), ValueError, "k is empty"),
    ("decode", lambda: ag.decode(ok, np.ones((2, 2)), np.ones((2, 2))), ValueError, r"one query per token \(n_q = n_k\): 3 != 2"),
    ("decode", lambda: ag.decode(ok, ok, nan), ValueError, "V must be finite"),
    ("ergodicity_coefficient", lambda: ag.ergodicity_coefficient([[0.5, 0.4]]), ValueError,
     r"W must be row-stochastic .*row 0 sums to 0.9"),
    ("ergodicity_coefficient", lambda: ag.ergodicity_coefficient([[1.5, -0.5]]), ValueError,
     r"W must be row-stochastic .*found -0.5 at index \(0, 1\)"),
    ("ergodicity_coefficient", lambda: ag.ergodicity_coefficient([0.5, 0.5]), ValueError, "W must be a 2-d array"),
    ("ergodicity_coefficient", lambda: ag.ergodicity_coefficient(np.ones((0, 3))), ValueError, "at least one row"),
    ("ergodicity_coefficient", lambda: ag.ergodicity_coefficient([[np.nan, 1.0]]), ValueError, "W must be finite"),
    ("row_spread", lambda: ag.row_spread(ok[0]), ValueError, "X must be a 2-d array"),
    ("row_spread", lambda: ag.row_spread(np.ones((0, 2))), ValueError, "X must have at least one row"),
    ("distance_from_rank_one", lambda: ag.distance_from_rank_one(np.zeros((3, 2))), ValueError, "X is zero"),
    ("distance_from_rank_one", lambda: ag.distance_from_rank_one(inf), ValueError, "X must be finite"),
    ("product_coefficients", lambda: ag.product_coefficients([]), ValueError, "at least one weight matrix"),
    ("product_coefficients", lambda: ag.product_coefficients([np.eye(2), np.eye(3)]), ValueError,
     r"layers\[1\] must have shape \(2, 2\)"),
    ("product_coefficients", lambda: ag.product_coefficients([np.eye(2), np.ones((2, 2))]), ValueError,
     r"layers\[1\] must be row-stochastic"),
    ("causal_path_counts", lambda: ag.causal_path_counts(0, 2), ValueError, "n must be a positive integer"),
    ("causal_path_counts", lambda: ag.causal_path_counts(5, 1.5), TypeError, "n_layers must be a positive integer"),
    ("causal_path_counts", lambda: ag.causal_path_counts(200, 40), ValueError, "more than 2\\*\\*62 paths"),
    ("path_share", lambda: ag.path_share(4, 0), ValueError, "n_layers must be a positive integer"),
    ("uniform_walk_share", lambda: ag.uniform_walk_share(-1, 2), ValueError, "n must be a positive integer"),
    ("init_causal_stack", lambda: ag.init_causal_stack(4, 2, 0), TypeError, "rng must be a numpy.random.Generator"),
    ("init_causal_stack", lambda: ag.init_causal_stack(4, 2, np.random.default_rng(0), scale=-1.0), ValueError,
     "scale must be a real number >= 0"),
    ("causal_stack", lambda: ag.causal_stack(ok, []), TypeError, "layers must be a non-empty list"),
    ("causal_stack", lambda: ag.causal_stack(ok, [{"W_Q": I2, "W_K": I2}]), ValueError,
     r"layers\[0\] must be a dict with exactly W_Q, W_K and W_V"),
    ("causal_stack", lambda: ag.causal_stack(ok, [{"W_Q": I3, "W_K": I2, "W_V": I2}]), ValueError,
     r"layers\[0\]\['W_Q'\] must have shape \(2, 2\)"),
    ("causal_stack", lambda: ag.causal_stack(ok, [{"W_Q": I2, "W_K": I2, "W_V": I2}], residual=1), TypeError,
     "residual must be True or False"),
    ("last_token_sensitivity", lambda: ag.last_token_sensitivity(nan, [{"W_Q": I2, "W_K": I2, "W_V": I2}]),
     ValueError, "X must be finite"),
    ("last_token_sensitivity", lambda: ag.last_token_sensitivity(ok, [{"W_Q": I2, "W_K": I2, "W_V": inf[:2]}]),
     ValueError, r"layers\[0\]\['W_V'\] must be finite"),
    # Attention sinks, induction heads
    ("in_degrees", lambda: ag.in_degrees(np.ones((2, 2)), 3), TypeError, "edges must be an integer array"),
    ("in_degrees", lambda: ag.in_degrees([[0, 5]], 3), ValueError, r"edges\[0\] has key index j = 5, outside 0..2"),
    ("in_degrees", lambda: ag.in_degrees([[0, 0]], 0), ValueError, "n must be a positive integer"),
    ("uniform_causal_weights", lambda: ag.uniform_causal_weights(0), ValueError, "n must be a positive integer"),
    ("uniform_causal_weights", lambda: ag.uniform_causal_weights(2.5), TypeError, "n must be a positive integer"),
    ("position_in_strength", lambda: ag.position_in_strength(np.ones((2, 3))), ValueError, r"W must be one \(n, n\) attention matrix or a batch"),
    ("position_in_strength", lambda: ag.position_in_strength(np.full((2, 2), np.nan)), ValueError, "W must be finite"),
    ("position_in_strength", lambda: ag.position_in_strength(strs[:2, :2]), TypeError, "W must hold real numbers"),
    ("previous_token_graph", lambda: ag.previous_token_graph(0), ValueError, "n must be a positive integer"),
    ("induction_graph", lambda: ag.induction_graph(5, 5), ValueError, r"varpi must be an integer in 1..4 \(a period shorter than n\)"),
    ("induction_graph", lambda: ag.induction_graph(5, 1.0), TypeError, "varpi must be an integer"),
    ("composed_graph", lambda: ag.composed_graph(I2, I3), ValueError, "W1 and W2 must be square matrices of one shape"),
    ("composed_graph", lambda: ag.composed_graph(inf[:2], I2), ValueError, "W1 must be finite"),
    ("head_scores", lambda: ag.head_scores(I3, I3, 2), ValueError, r"varpi must be an integer in 1..1"),
    ("head_scores", lambda: ag.head_scores(np.eye(4), np.eye(4), True), TypeError, "varpi must be an integer"),
]


def _cache():
    """A KV cache holding one token with d = 2 and d_v = 1."""
    cache = ag.KVCache()
    cache.append([1.0, 0.0], [1.0])
    return cache


def _params(**change):
    """Valid BlockParams for d = 2 (two heads of width 1, d_ff = 4), with some fields changed."""
    p = dict(W_Q=I2, W_K=I2, W_V=I2, W_O=I2, W_1=np.ones((2, 4)), b_1=np.zeros(4), W_2=np.ones((4, 2)),
             b_2=np.zeros(2), gamma_1=np.ones(2), beta_1=np.zeros(2), gamma_2=np.ones(2),
             beta_2=np.zeros(2), n_heads=2)
    if "b_1" in change:  # a wrong b_1: make d_ff = 4 and d = 4 so that only b_1 is off
        p.update(W_Q=np.eye(4), W_K=np.eye(4), W_V=np.eye(4), W_O=np.eye(4), W_1=np.ones((4, 4)),
                 W_2=np.ones((4, 4)), b_2=np.zeros(4), gamma_1=np.ones(4), beta_1=np.zeros(4),
                 gamma_2=np.ones(4), beta_2=np.zeros(4))
    p.update(change)
    return ag.BlockParams(**p)


def _torch_state(in_bias: float = 0.0):
    """A state dict in PyTorch's layout for d = 2, d_ff = 3."""
    return {"self_attn.in_proj_weight": np.ones((6, 2)), "self_attn.in_proj_bias": np.full(6, in_bias),
            "self_attn.out_proj.weight": np.eye(2), "linear1.weight": np.ones((3, 2)),
            "linear2.weight": np.ones((2, 3)), "norm1.weight": np.ones(2), "norm2.weight": np.ones(2)}


# A chapter's own rows live in its test file (tests/test_<stem>.py: BAD = [row, ...]).
for _rows in bt.chapter_tables("BAD", "test_validation").values():
    BAD += _rows


@pytest.mark.parametrize("name, call, error, message", BAD, ids=[f"{b[0]}-{k}" for k, b in enumerate(BAD)])
def test_bad_input_raises_a_clear_error(name, call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_errors_are_valueerror_or_typeerror_subclasses():
    assert all(issubclass(error, (ValueError, TypeError)) for *_, error, _ in BAD)


def test_every_public_function_is_in_the_table():
    public = {name for name in ag.__all__ if callable(getattr(ag, name))} - {"DerivationError"}
    assert public <= {row[0] for row in BAD}, public - {row[0] for row in BAD}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_dtype_is_kept(dtype):
    Q = np.arange(6, dtype=dtype).reshape(3, 2) / 7  # (n, d)
    Y, W = ag.attention(Q, Q, Q)
    assert ag.scaled_scores(Q, Q).dtype == dtype and W.dtype == dtype and Y.dtype == dtype


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_dtype_is_kept_by_every_implementation(dtype):
    Q = (np.arange(6, dtype=dtype).reshape(3, 2) / 7).astype(dtype)  # (n, d)
    edges = np.array([[0, 0], [1, 1], [2, 2], [0, 1], [2, 0]])  # (E, 2)
    assert ag.edge_attention(Q, Q, Q, edges).dtype == dtype
    assert ag.blockwise_attention(Q, Q, Q, 2).dtype == dtype


def test_no_queries_gives_empty_results_in_every_implementation():
    Q0, K = np.zeros((0, 2)), np.ones((3, 2))  # (0, d), (n_k, d)
    assert ag.edge_attention(Q0, K, K, np.zeros((0, 2), dtype=int)).shape == (0, 2)
    assert ag.blockwise_attention(Q0, K, K, 2).shape == (0, 2)


def test_a_mix_of_float32_and_float64_computes_in_float64():
    Q = np.ones((3, 2), dtype=np.float32)
    Y, W = ag.attention(Q, Q, Q.astype(np.float64))
    assert Y.dtype == np.float64


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.bool_])
def test_integer_and_boolean_inputs_are_converted_to_float64(dtype):
    X = np.array([[0, 1], [1, 0], [1, 1]], dtype=dtype)  # (n, d)
    Y, W = ag.attention(X, X, X)
    Yf, Wf = ag.attention(X.astype(float), X.astype(float), X.astype(float))
    assert Y.dtype == np.float64
    np.testing.assert_array_equal(Y, Yf)


def test_no_queries_gives_empty_results_of_the_right_shape():
    Y, W = ag.attention(np.zeros((0, 2)), ok, np.ones((3, 5)))
    assert Y.shape == (0, 5) and W.shape == (0, 3)


def test_one_token_attends_to_itself_with_weight_one():
    Y, W = ag.attention([[3.0, -1.0]], [[3.0, -1.0]], [[2.0, 5.0]])
    np.testing.assert_array_equal(W, [[1.0]])
    np.testing.assert_array_equal(Y, [[2.0, 5.0]])


def test_all_scores_equal_gives_uniform_weights():
    W = ag.softmax(np.full((2, 4), 7.5))
    np.testing.assert_array_equal(W, np.full((2, 4), 0.25))


def test_scores_of_magnitude_1e300_give_finite_correct_weights():
    S = np.array([[1e300, 0.0, -1e300], [-1e300, -1e300, 1e300], [1e300, 1e300, 1e300]])
    W = ag.softmax(S)
    np.testing.assert_array_equal(W, [[1, 0, 0], [0, 0, 1], [1 / 3, 1 / 3, 1 / 3]])


@pytest.mark.slow
def test_input_checks_survive_python_O():
    code = "import attention_graph as ag\ntry:\n    ag.softmax([[1.0, float('nan')]])\nexcept ValueError:\n    print('refused')"
    out = subprocess.run([sys.executable, "-O", "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "refused", out.stderr


def test_as_edges_refuses_bad_edges():
    with pytest.raises(TypeError, match="edges must be an integer array"):
        validation.as_edges(np.ones((2, 2)), "edges", 3, 3)
    with pytest.raises(ValueError, match=r"edges\[1\] has key index j = 3, outside 0..2"):
        validation.as_edges([[0, 1], [1, 3]], "edges", 3, 3)
    with pytest.raises(ValueError, match=r"edges\[0\] has query index i = -1"):
        validation.as_edges([[-1, 1]], "edges", 3, 3)
    with pytest.raises(ValueError, match=r"shape \(E, 2\)"):
        validation.as_edges([[0, 1, 2]], "edges", 3, 3)
    assert validation.as_edges(np.zeros((0, 2), int), "edges", 3, 3).shape == (0, 2)


# --- Every implementation agrees: dense, masked all-True, edge list on the complete graph, blockwise --

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(derandomize=True)
@given(n_q=st.integers(1, 7), n_k=st.integers(1, 7), d=st.integers(1, 5), d_v=st.integers(1, 4),
       block=st.integers(1, 8), scale=st.sampled_from([1e-3, 1.0, 30.0]), seed=st.integers(0, 2**32 - 1))
def test_all_implementations_agree(n_q, n_k, d, d_v, block, scale, seed):
    rng = np.random.default_rng(seed)
    Q = rng.standard_normal((n_q, d)) * scale  # (n_q, d)
    K = rng.standard_normal((n_k, d)) * scale  # (n_k, d)
    V = rng.standard_normal((n_k, d_v))  # (n_k, d_v)
    Y, W = ag.attention(Q, K, V)
    Y_mask, W_mask = ag.attention(Q, K, V, mask=np.ones((n_q, n_k), dtype=bool))
    edges = np.array([(i, j) for i in range(n_q) for j in range(n_k)])  # (E, 2), the complete graph
    Y_edges = ag.edge_attention(Q, K, V, edges)
    Y_block = ag.blockwise_attention(Q, K, V, block)
    np.testing.assert_array_equal(Y_mask, Y)
    np.testing.assert_allclose(Y_edges, Y, rtol=0, atol=1e-12)
    np.testing.assert_allclose(Y_block, Y, rtol=0, atol=1e-12)


def test_the_api_page_documents_every_public_name():
    import inspect
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "book" / "api.md").read_text()
    public = [n for n in ag.__all__ if not inspect.ismodule(getattr(ag, n)) and n != "DerivationError"]
    missing = [n for n in public if f"attention_graph.{n}\n" not in text]
    assert missing == [], f"add these to book/api.md: {missing}"
