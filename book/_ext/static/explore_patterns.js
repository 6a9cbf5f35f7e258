/* Attention patterns, explorable: the number of tokens n and the window w; each pattern's mask, its
 * edge count and its maximum path length, all computed by the package at build time
 * (patterns.named_patterns, patterns.max_path_length). Its state (explorables.patterns_state:
 * states["n,k"][pattern] = {mask: one 0/1 string per query, edges, max_path}) and its keys:
 * attention_graph.explorables.SCHEMAS["patterns"]. */
(function () {
  "use strict";
  const AE = window.AttentionExplore;
  if (!AE) return;

  const SIDE = 120;
  const PAD = 16;  // room above and left of the mask for its axes' names

  AE.register("patterns", (root, state) => {
    let n = state.n, k = state.k;
    const { controls } = AE.frame(root, "Row i is a query, column j a key, filled where i may attend "
      + "to j. Slide n and w; each pattern gives its edges and its maximum path length.", { status: null });
    AE.choice(controls, { label: "Tokens n", values: state.ns, value: n, symbol: "n", onInput: (v) => { n = v; update(); } });
    AE.choice(controls, { label: "Window w", values: state.ks, value: k, symbol: "w", onInput: (v) => { k = v; update(); } });
    const masks = AE.output(root, "Each pattern's mask: row i a query, column j a key, filled where i attends to j");
    const grid = AE.el("div", { class: "ae-row ae-patterns" }, masks);

    function update() {
      const patterns = state.states[`${n},${k}`];
      root.dataset.n = String(n);
      root.dataset.k = String(k);
      grid.textContent = "";
      Object.entries(patterns).forEach(([name, p], c) => {
        const card = AE.el("div", { class: "ae-model", "data-pattern": c, "data-edges": p.edges,
          "data-max-path": p.max_path }, grid);
        AE.el("p", { class: "ae-title" }, card, name);
        const svg = AE.svg("svg", { viewBox: `${-PAD} ${-PAD} ${SIDE + PAD} ${SIDE + PAD}`, class: "ae-mask", role: "img",
          "aria-label": `${name}: ${p.edges} edges, maximum path length ${p.max_path}` }, card);
        AE.svg("text", { x: SIDE / 2, y: -5, "text-anchor": "middle", class: "ae-axis-label", "data-axis": "key" }, svg,
          "key j \u2192");
        AE.svg("text", { x: -5, y: SIDE / 2, "text-anchor": "middle", class: "ae-axis-label", "data-axis": "query",
          transform: `rotate(-90 -5 ${SIDE / 2})` }, svg, "\u2190 query i");  // rotated: its arrow points down, as i grows
        AE.svg("rect", { x: 0, y: 0, width: SIDE, height: SIDE, class: "ae-mask-frame" }, svg);
        const cell = SIDE / n;
        let d = "";
        p.mask.forEach((row, i) => [...row].forEach((bit, j) => {
          if (bit === "1") d += `M${j * cell},${i * cell}h${cell}v${cell}h${-cell}z`;
        }));
        AE.svg("path", { d, class: "ae-mask-cells" }, svg);
        AE.el("p", {}, card, `${p.edges} edges, max. path ${p.max_path}`);
      });
    }
    update();
  });
}());
