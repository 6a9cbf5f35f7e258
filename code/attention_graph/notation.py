"""The book's symbol table, in one place: one entry per symbol, one meaning each; and its running example.

``book/symbols.md`` (the back matter) generates the full table from it with ``table_markdown``;
``book/notation.md`` states the conventions and shows the group "Attention" (the symbols the first
chapters need), the group after it in an aside; ``tests/test_notation.py`` checks that every letter a
page's mathematics uses has an entry and that no symbol has two.

The running example, four people of two numbers each (``PEOPLE``, ``embeddings``), is introduced on
the notation page, where the book first uses it; ``worked_example`` and every later chapter import it
from here.

>>> "| $Q$, $K$ |" in table_markdown()
True
"""

from __future__ import annotations

import re

import numpy as np

# No public name of the package: its helpers are imported from this module by name.
__all__: list[str] = []

# The running example of the source article: four people, in the order of the rows of X.
PEOPLE: tuple[str, ...] = ("Carla", "Ana", "Bruno", "Diego")


def embeddings() -> np.ndarray:
    """X, one row per person in the order of ``PEOPLE``. Shape (4, 2)."""
    return np.array([[0.0, 1.0],  # Carla
                     [1.0, 0.0],  # Ana
                     [1.0, 1.0],  # Bruno
                     [1.0, -1.0]])  # Diego  -> (4, 2)


# (group, [(symbol, shape, meaning), ...]): the symbol column is what the page shows, one or more
# symbols in dollars; each symbol between dollars is an entry.
SYMBOLS = [
    ('Attention', [
        ('$n$', '',
         'number of elements (tokens, people, nodes)'),
        ('$d_{\\text{model}}$', '',
         "length of an element's input vector"),
        ('$X$', '$n \\times d_{\\text{model}}$',
         'inputs, one row $x_i$ per element'),
        ('$i$, $j$, $l$', '',
         'indices: $i$ the element that receives (a query), $j$ the one that sends (a key), $l$ a summation index'),
        ('$W_Q$, $W_K$', '$d_{\\text{model}} \\times d$',
         'query and key projections'),
        ('$W_V$', '$d_{\\text{model}} \\times d_v$',
         'value projection'),
        ('$Q$, $K$', '$n \\times d$',
         'queries $q_i$ and keys $k_j$, as rows'),
        ('$V$', '$n \\times d_v$',
         'values $v_j$, as rows'),
        ('$d$', '',
         'length of a query and of a key (the scale is $\\sqrt{d}$)'),
        ('$d_v$', '',
         'length of a value, and of an output'),
        ('$S$', '$n \\times n$',
         'scores, $S_{ij} = q_i \\cdot k_j / \\sqrt{d}$'),
        ('$W$', '$n \\times n$',
         'attention weights, each row a probability distribution'),
        ('$Y$', '$n \\times d_v$',
         'outputs, row $y_i = \\sum_j W_{ij} v_j$'),
    ]),
    ('Attention: the other symbols', [
        ('$n_q$, $n_k$', '',
         ('number of queries and of keys, when they come from different elements: $Q$, $S$, $W$ and $Y$ '
          'then have $n_q$ rows, $K$ and $V$ have $n_k$ rows, and $S$ and $W$ have $n_k$ columns. In '
          'self-attention $n_q = n_k = n$')),
        ('$W_{QK}$', '$d_{\\text{model}} \\times d_{\\text{model}}$',
         'the product $W_Q W_K^\\top$, the one matrix through which both projections act on the scores'),
        ('$s$', '$n_k$',
         'one row of scores, when a single row is studied'),
        ('$\\tilde W$', '$n_q \\times n_k$',
         'unnormalised weights $e^{S_{ij}}$, so that $W_{ij} = \\tilde W_{ij} / \\sum_l \\tilde W_{il}$'),
        ('$p$', '$n_k$',
         'one row of $W$, when a single row is studied'),
        ('$J$', '$n_k \\times n_k$',
         'the Jacobian of a softmax row, $\\partial p / \\partial s$'),
        ('$\\tau$', '',
         'temperature of a softmax, $\\tau > 0$'),
        ('$M$', '$n_q \\times n_k$',
         'mask: $M_{ij} = 1$ (true) where query $i$ may attend to key $j$, else 0'),
        ('$P$', '$n \\times n$',
         'a permutation matrix'),
        ('$I$, $\\mathbf{1}$', '',
         'identity matrix; vector of ones'),
    ]),
    ('Several heads and the Transformer block', [
        ('$H$', '',
         'number of heads'),
        ('$h$', '',
         'a head, $h = 1, \\dots, H$; a superscript $^{(h)}$ or subscript $_h$ marks what belongs to it'),
        ('$d_h$', '',
         'per-head width of queries and keys, $d_h = d_{\\text{model}} / H$'),
        ('$Q_h$, $K_h$, $V_h$', '$n \\times d_h$',
         "head $h$'s block of columns of $Q$, $K$, $V$"),
        ('$q^{(h)}_i$, $k^{(h)}_j$', '$d_h$',
         "head $h$'s query of element $i$ and key of element $j$: row $i$ of $Q_h$, row $j$ of $K_h$"),
        ('$W^{(h)}$', '$n \\times n$',
         "head $h$'s attention weights"),
        ('$W_O$', '$H d_h \\times d_{\\text{model}}$',
         "output projection applied to the heads' outputs side by side"),
        ('$d_{\\text{ff}}$', '',
         'width of the hidden layer of the feed-forward block'),
        ('$W_1$, $W_2$', '$d_{\\text{model}} \\times d_{\\text{ff}}$, $d_{\\text{ff}} \\times d_{\\text{model}}$',
         'the two weight matrices of the feed-forward block'),
        ('$b$, $b_1$, $b_2$', '$b_1$: $d_{\\text{ff}}$, $b_2$: $d_{\\text{model}}$',
         ('a bias (shift) vector added after a linear map; $b_1$, $b_2$ those of the feed-forward block '
          '(a shift $b$ of the values in an exercise of {doc}`attention`)')),
        ('$\\gamma$, $\\beta$', '$d_{\\text{model}}$',
         'gain and bias of layer normalisation (LN)'),
        ('$T$', '',
         ('number of layers of a stack; $l = 1, \\dots, T$ a layer, $X^{(l)}$, $W^{(l)}$ its input-output and '
          'weights (a transpose is written $^\\top$, never $^T$)')),
        ('$\\rho$', '',
         ('the share of the residual path in attention rollout, $\\tilde A^{(l)} = \\rho I + (1 - \\rho) '
          'W^{(l)}$; $\\mathcal{R}$ the rollout')),
    ]),
    ('Gradients', [
        ('$dY$, $dW$, $dS$', 'as $Y$, $W$, $S$',
         'the gradient of the loss with respect to $Y$, $W$, $S$'),
        ('$dQ$, $dK$, $dV$', 'as $Q$, $K$, $V$',
         'the gradients with respect to the queries, keys and values'),
        ('$\\mathcal{J}$', '', 'a scalar loss computed from the outputs'),
        ('$\\operatorname{lse}_i$', '',
         'log-sum-exp of row $i$ of the scores, $\\log \\sum_j e^{S_{ij}}$'),
        ('$\\circ$', '',
         'entrywise (Hadamard) product'),
    ]),
    ('Blockwise attention', [
        ('$m$, $\\ell$, $o$', '$1$, $1$, $d_v$',
         ('the state of a block of keys, per query: the largest score, the normaliser $\\sum_j e^{s_j -'
          ' m}$, the output; $d_v + 2$ numbers')),
        ('$\\mathcal{A}$, $\\mathcal{B}$, $\\mathcal{C}$', '',
         ('blocks of keys (disjoint sets of keys); as subscripts, the state of one: $m_{\\mathcal{A}}$, '
          '$\\ell_{\\mathcal{B}}$, $o_{\\mathcal{C}}$')),
        ('$n_b$', '', 'the number of keys in a block (the block size)'),
    ]),
    ('Graphs', [
        ('$A$', '$n \\times n$',
         'adjacency matrix of a fixed graph, $A_{ij} > 0$ for an edge $i \\to j$'),
        ('$N(i)$', '',
         'the neighbours of $i$, $\\{\\, j : A_{ij} > 0 \\,\\}$ ($i$ itself only if the graph has the self-loop)'),
        ('$\\bar N(i)$', '',
         '$N(i) \\cup \\{i\\}$, the neighbours and the node itself'),
        ('$N_M(i)$', '',
         'the keys a mask allows row $i$, $\\{\\, j : M_{ij} = 1 \\,\\}$'),
        ('$\\mathcal{E}$, $E$', '',
         'the set of edges of a sparse graph, and their number'),
        ('$D$', '$n \\times n$',
         'diagonal matrix of degrees (row sums) of the graph at hand; $\\tilde D$ with self-loops, of $A + I$'),
        ('$d_i$', '', 'the degree of node $i$, the diagonal entry $D_{ii}$ (positional encodings)'),
        ('$\\hat A$', '$n \\times n$',
         "GCN's propagation matrix $\\tilde D^{-1/2} (A + I) \\tilde D^{-1/2}$"),
        ('$\\bar A$', '$n \\times n$',
         'mean aggregation, $\\tilde D^{-1} (A + I)$'),
        ('$\\Theta$, $\\tilde X$', "$d_{\\text{model}} \\times d'$, $n \\times d'$",
         "GAT's learned transform and the transformed features $\\tilde X = X\\Theta$, rows $\\tilde x_i$"),
        ("$d'$", '',
         "length of GAT's transformed features $\\tilde x_i$, the number of columns of $\\Theta$"),
        ('$a$, $a_1$, $a_2$', "$2d'$, $d'$, $d'$",
         "GAT's attention vector and its two halves"),
        ('$S^{\\mathrm{GAT}}$, $S^{\\mathrm{GATv2}}$', '$n \\times n$',
         "GAT's additive scores {eq}`eq-gat-scores`, in place of $S$, and GATv2's (an exercise of {doc}`graph`)"),
        ('$L$', '$n \\times n$',
         'the combinatorial Laplacian $D - A$ (spectral clustering)'),
        ('$\\mathcal{L}$', '$n \\times n$',
         'the normalized Laplacian $I - D^{-1/2} A D^{-1/2}$ (positional encodings)'),
        ('$L_{\\mathrm{rw}}$', '$n \\times n$',
         'the random-walk Laplacian $I - D^{-1} W$'),
        ('$\\lambda$, $u$, $\\hat u$', '',
         ('an eigenvalue and an eigenvector; $\\lambda_2$ the second smallest; $\\hat u = D^{-1/2} u$ the '
          'eigenvector of the random-walk Laplacian that goes with an eigenvector $u$ of $\\mathcal{L}$')),
        ('$s_{\\mathrm{out}}(j)$', '',
         ('out-strength of node $j$: the total weight $\\sum_i W_{ij}$ on the arrows leaving $j$, '
          'i.e. the attention the queries pay to $j$')),
        ('$r^{\\star}$', '$n$',
         'stationary distribution of the walk on $W$: PageRank $r$ without teleport, its fixed point'),
        ('$r$, $\\alpha$', '$n$,',
         'PageRank and its damping'),
        ('$A_s$', '$n \\times n$',
         'symmetrised attention, $(W + W^\\top)/2$'),
        ('$U_{\\mathrm{pe}}$, $d_{\\text{pe}}$', '$n \\times d_{\\text{pe}}$',
         'Laplacian positional encodings: the first $d_{\\text{pe}}$ non-trivial eigenvectors as columns'),
        ('$C$', '$d_{\\text{pe}} \\times d_{\\text{model}}$',
         'projection of the encodings in the Graph Transformer layer'),
        ('$\\nu_{ij}$, $\\mathbb{E}_0$', '',
         ('adjusted Rand index: the contingency counts, with margins $\\nu_{i\\cdot} = \\sum_j \\nu_{ij}$ and '
          '$\\nu_{\\cdot j}$ the group sizes of the two splits $\\mathcal{P}$, $\\mathcal{Q}$; the chance term')),
        ('$\\mathcal{P}$, $\\mathcal{Q}$', '', 'two splits (partitions) of the nodes into groups'),
        ('$C_n$, $P_n$', '',
         'the cycle and the path on $n$ nodes'),
    ]),
    ('Sequences', [
        ('$\\mathrm{PE}_i$, $\\omega_l$', '$d$, ',
         'the sinusoidal encoding of position $i$; $\\omega_l = 10000^{-2l/d}$ the frequency of its pair $l$ (from 0)'),
        ('$R(\\theta)$', '$2 \\times 2$', 'the rotation of the plane by the angle $\\theta$ (rotary positions)'),
        ('$B_{ij}$', '$n_q \\times n_k$',
         'a bias added to the scaled scores ($-\\infty$ masks an entry); the matrix $B$'),
        ('$\\zeta$', '', 'the ALiBi slope, $B_{ij} = -\\zeta\\,(i - j)$ for $j \\le i$'),
        ('$\\phi$', '', 'a feature map of linear attention, $\\mathbb{R}^d \\to \\mathbb{R}^F$'),
        ('$F$', '',
         ('its number of features (feature nodes); the Frobenius norm has an upright subscript, '
          '$\\lVert \\cdot \\rVert_{\\mathrm{F}}$')),
        ('$\\mathcal{N}$', '',
         'the normal (Gaussian) distribution, $\\mathcal{N}(0, I_d)$ the standard one in $d$ dimensions'),
        ('$\\xi_l$', '$d$',
         'the random directions of positive random features, one per feature node $l = 1, \\dots, F$'),
        ('$\\mathcal{S}_i$, $\\mathcal{Z}_i$', '$F \\times d_v$, $F$', 'the running sums of causal linear attention'),
    ]),
    ('What the graph view explains', [
        ('$\\tau_1(W)$', '', "Dobrushin's ergodicity coefficient, $1 - \\min_{i,i'} \\sum_j \\min(W_{ij}, W_{i'j})$"),
        ('$\\Delta(X)$, $\\operatorname{res}(X)$', '',
         ("the spread of the rows, $\\max_{i,i'} \\lVert x_i - x_{i'} \\rVert_\\infty$, and the distance from "
          'equal rows, '
          '$\\lVert X - \\mathbf{1}\\bar{x}^\\top \\rVert_{\\mathrm{F}} / \\lVert X \\rVert_{\\mathrm{F}}$')),
        ('$U^{(l)}$', '$d \\times d$', 'the value map of layer $l$ in the rank-collapse stacks (a signed permutation)'),
        ('$\\operatorname{walks}_T(j)$', '',
         'the number of walks of $T$ steps from token $j$ to the last token in the causal graph'),
        ('$\\deg_{\\mathrm{out}}(j)$', '',
         'out-degree of key $j$: the number of arrows leaving it, one to each query that sees it'),
        ('$H_n$', '',
         'the harmonic number $\\sum_{l=1}^{n} 1/l$ (always with its subscript: $H$ alone is the number of heads)'),
        ('$\\mathbf{e}_j$', '$n$', 'the $j$-th unit vector'),
        ('$W_E$, $W_P$, $W_U$', ('vocabulary $\\times\\, d_{\\text{model}}$, $n \\times d_{\\text{model}}$, '
          '$d_{\\text{model}} \\times{}$ vocabulary'),
         'learned token embeddings, position embeddings and unembedding of a trained toy model'),
        ('$n_{\\mathrm{per}}$, $n_{\\mathrm{per}}^{\\max}$', '',
         'the period of a repeated sequence ({doc}`induction`), and the largest period'),
        ('$\\operatorname{tok}_i$', '',
         'the token at position $i$ of a sequence ({doc}`induction`); $W_E[\\operatorname{tok}]$ their embeddings'),
    ]),
    ("Today's attention", [
        ('$H_{\\text{kv}}$', '',
         ('number of key/value heads: each serves $H/H_{\\text{kv}}$ query heads; $H_{\\text{kv}} = 1$ is '
          'multi-query attention ({doc}`kv_sharing`)')),
        ('$c^{\\mathrm{KV}}_j$, $C^{\\mathrm{KV}}$', '$d_c$, $n \\times d_c$',
         ('the latent of token $j$ in multi-head latent attention, $c^{\\mathrm{KV}}_j = x_j W_{\\mathrm{DKV}}$, '
          'and its rows stacked')),
        ('$d_c$', '', 'the width of the latent $c^{\\mathrm{KV}}_j$'),
        ('$W_{\\mathrm{DKV}}$', '$d_{\\text{model}} \\times d_c$', 'the down-projection to the latent'),
        ('$W_{\\mathrm{UK}}$, $W_{\\mathrm{UV}}$', '$d_c \\times d_{\\text{model}}$',
         'the up-projections of the latent to keys and values, $W^{(h)}_{\\mathrm{UK}}$ their head-$h$ columns'),
        ('$\\tilde q_i$', '$d_c$',
         "an absorbed query, $q_i W^{(h)\\top}_{\\mathrm{UK}}$: it scores the latents themselves"),
        ('$q^{\\mathrm{R}}_i$, $k^{\\mathrm{R}}_j$, $d_{\\mathrm{R}}$', '$d_{\\mathrm{R}}$',
         'the decoupled rotary query and key of latent attention, and their width'),
        ('$n_{\\text{sink}}$', '', 'the number of sink tokens a sliding window keeps ({doc}`windows`)'),
        ('$\\mathcal{D}$', '', 'the keys evicted from a row of attention'),
    ]),
    ("Today's attention: signed edges, gates, state spaces", [
        ('$Q^{+}$, $K^{+}$, $Q^{-}$, $K^{-}$', '$n_q \\times d$, $n_k \\times d$',
         'the queries and keys of the two maps of differential attention ({doc}`differential`)'),
        ('$W^{+}$, $W^{-}$', '$n_q \\times n_k$',
         ('the two softmax maps of differential attention, '
          '$W^{+} = \\operatorname{softmax}(Q^{+} K^{+\\top}/\\sqrt{d})$')),
        ('$W^{\\pm}$', '$n_q \\times n_k$',
         'the signed weights of differential attention, $W^{+} - \\vartheta W^{-}$; its rows sum to $1 - \\vartheta$'),
        ('$\\vartheta$', '',
         'the weight of the second map in differential attention (the paper\'s $\\lambda$)'),
        ('$S^{+}$, $S^{-}$, $Z^{+}_i$, $Z^{-}_i$', '$n_q \\times n_k$, ',
         'the scaled scores of the two maps and their row normalisers'),
        ('$\\Omega$', '', 'the margin by which the first map scores the relevant key above the second'),
        ('$j_0$', '', 'the one key a query needs, in the common-mode example'),
        ('$\\bar D$, $\\bar L$', '$n \\times n$',
         'the degrees counted by magnitude, $\\bar D_{ii} = \\sum_j |A_{ij}|$, and the signed Laplacian $\\bar D - A$'),
        ('$W_{\\mathrm{gate}}$', '$d_{\\text{model}} \\times d_v$', 'the projection that gives the gate logits'),
        ('$Y^{\\mathrm{gate}}$', '$n_q \\times d_v$',
         'the gated outputs, $\\operatorname{sigmoid}(X W_{\\mathrm{gate}}) \\circ Y$'),
        ('$\\varrho_l$', '',
         'the decay of token $l$ in a state-space model, $0 < \\varrho_l \\le 1$ (Mamba-2\'s $a_l$)'),
        ('$\\Pi$', '$n \\times n$',
         'the decay mask, $\\Pi_{ij} = \\varrho_{j+1} \\cdots \\varrho_i$ for $j \\le i$ and 0 above the diagonal'),
        ('$\\mathcal{M}_i$', '$d \\times d_v$', 'the state of a state-space model after token $i$'),
    ]),
    ('Probability and the worked example', [
        ('$G$', '',
         'the Gram matrix $XX^\\top$'),
        ('$g$, $\\eta$, $t$, $\\kappa$', '',
         "the unknowns of the recovery of the worked example, defined in {doc}`recovery`"),
        ('$\\delta_{ij}$', '', 'the Kronecker delta: 1 when $i = j$, else 0'),
        ('$Z_i$', '',
         'the normaliser $\\sum_l e^{S_{il}}$ of row $i$'),
    ]),
    ('Local to one page or one proof (defined where used)', [
        ('$x_i$, $y_i$', '$d_{\\text{model}}$, $d_v$', 'row $i$ of $X$ and of $Y$'),
        ('$\\bar{x}$', '$d_{\\text{model}}$', 'the mean of the inputs of a group (worked example)'),
        ('$x^{\\mathrm{dec}}_i$', '$d_{\\text{model}}$',
         'the input of decoder token $i$, a query of cross-attention ({doc}`multihead`)'),
        ('$\\bar v_i$', '$d_v$', 'the centre of mass of the values other than $v_i$, masses $W_{ij}$'),
        ('$\\tilde x_i$', '$d$', "row $i$ of GAT's $\\tilde X$"),
        ('$\\tilde A$, $\\tilde D$', '$n \\times n$',
         ('with self-loops: $\\tilde D$ the degrees of $A + I$; $\\tilde A^{(l)} = \\rho I + (1-\\rho)W^{(l)}$ the '
          'layer of rollout')),
        ('$z$', '', ('$z = e^{1/\\sqrt{2}}$ in the worked example,'
                      ' the variable of the rational functions its weights are')),
        ('$e$', '', 'the base of the exponential'),
        ('$\\pi$', '', 'the constant 3.14159…, half a turn in radians'),
        ('$f$', '', 'a scalar read off each value in a proof, $f_j = v_{jc}$ (attention chapter)'),
        ('$w$', '', ('the reach of a sliding window: query $i$ attends to the keys $j$ with $|i - j| \\le w$ '
                     '({doc}`patterns`), or $i - w \\le j \\le i$ when it is causal')),
        ('$A_{\\mathrm{cross}}$', '$(n_q + n_k) \\times (n_q + n_k)$', 'the bipartite adjacency of cross-attention'),
        ('$\\mathcal{R}$', '$n \\times n$', 'the attention rollout, $\\mathcal{R}^{(T)}$ after $T$ layers'),
        ('$R$', '$d \\times d$',
         'a rotation, an orthogonal matrix with $R R^\\top = I$ (rotary positions: $R(\\theta)$)'),
        ('$\\hat m$, $\\hat v$', '', "Adam's bias-corrected running means of the gradient and of its square"),
        ('$\\beta_1$, $\\beta_2$', '', "Adam's decay rates of those running means"),
        ('$\\mathcal{T}$', '', 'the set of tied maxima of a row of scores'),
        ('$\\Gamma$, $\\Gamma_i$', '', ('a real constant: the shift added to a whole row of scores ({doc}`softmax`), '
                                     'the factor scaling every value in an exercise of {doc}`attention`; '
                                     '$\\Gamma_i$ the one score of the allowed entries of row '
                                     '$i$ ({doc}`graph`)')),
        ('$\\Lambda$', '', ('a penalty subtracted from the forbidden scores and sent to $\\infty$: a mask as a '
                            'limit ({doc}`graph`)')),
        ('$\\mu$, $\\sigma$', '', 'the mean and the standard deviation of a row in layer normalisation'),
        ('$\\varepsilon$', '',
         ('the small constant that keeps a denominator away from 0: added to the variance in layer '
          'normalisation, to the root mean square of the gradient in Adam ({doc}`training`)')),
        ('$\\theta$', '', 'an angle: of a Fourier mode on a path or a cycle, or of a rotation'),
        ('$\\chi$', '',
         ('the number of a Fourier mode: $\\theta_\\chi = \\pi \\chi / (n - 1)$ on $P_n$, $2\\pi \\chi / n$ on $C_n$, '
          'where $u^{\\cos}$, $u^{\\sin}$ are its cosine and sine eigenvectors ({doc}`positional`)')),
        ('$\\psi_1$, $\\psi_2$', '',
         ('the coefficients of a sinusoid $\\psi_1 \\cos(\\theta j) + \\psi_2 \\sin(\\theta j)$ fitted to a column '
          'of an encoding')),
        ('$\\operatorname{dist}(i, j)$', '',
         ('the shortest-path distance: the fewest edges a message from $j$ crosses to reach $i$ '
          "(Graphormer's spatial bias is indexed by it)")),
        ('$\\operatorname{diam}$', '',
         'the diameter of a graph, the largest $\\operatorname{dist}(i, j)$ over the pairs a path connects'),
        ('$W_{VO}$', '$d_{\\text{model}} \\times d_{\\text{model}}$',
         'a transform $W_V^{(h)} W_O^{(h)}$ shared by every head'),
        ('$\\mathcal{H}_i$', '', 'the entropy of row $i$ of $W$'),
        ("$X'$", '$n \\times d_{\\text{model}}$', "the output of a block's attention sublayer"),
        ('$c$', '',
         'a value coordinate, as in $Y_{ic}$'),
    ]),
]


def entries() -> list[str]:
    """Every symbol the table has an entry for: each dollar group of a row's symbol column."""
    return [m.strip() for _, rows in SYMBOLS for symbol, _, _ in rows for m in re.findall(r"\$([^$]+)\$", symbol)]


def table_markdown(groups: list[str] | None = None) -> str:
    """The table as MyST Markdown: one table per group (all, or those named), columns symbol and
    meaning, a shape said first in the meaning ("shape $n \\times d$: ..."): two columns fit a phone's."""
    known = [group for group, _ in SYMBOLS]
    unknown = sorted(set(groups or []) - set(known))
    if unknown:
        raise ValueError(f"groups must be among {known}; got {unknown}")
    out = []
    for group, rows in SYMBOLS:
        if groups is not None and group not in groups:
            continue
        out += [f"**{group}.**", "", "| symbol | meaning |", "| --- | --- |"]
        out += [f"| {symbol} | {f'shape {shape}: ' if shape else ''}{meaning} |" for symbol, shape, meaning in rows]
        out.append("")
    return "\n".join(out)

