/* Attention patterns, explorable: the number of tokens n and the window w; each pattern's mask, its
 * edge count and its maximum path length, all computed by the package at build time
 * (patterns.named_patterns, patterns.max_path_length). State (book/patterns.md): ns, ks, n, k,
 * states["n,k"][pattern] = {mask: one 0/1 string per query, edges, max_path}. */
(function () {
  "use strict";
  const AE = window.AttentionExplore;
  if (!AE) return;

  const SIDE = 120;

  AE.register("patterns", (root, state) => {
    let n = state.n, k = state.k;
    AE.el("p", { class: "ae-hint" }, root, "Row i is a query, column j a key, filled where i may attend "
      + "to j. Slide n and w; each pattern gives its edges and its maximum path length.");
    const controls = AE.el("div", { class: "ae-controls" }, root);
    AE.slider(controls, { label: "Tokens n", min: 0, max: state.ns.length - 1, step: 1, value: state.ns.indexOf(n),
      show: (v) => String(state.ns[v]), onInput: (v) => { n = state.ns[v]; update(); } });
    AE.slider(controls, { label: "Window w", min: 0, max: state.ks.length - 1, step: 1, value: state.ks.indexOf(k),
      show: (v) => String(state.ks[v]), onInput: (v) => { k = state.ks[v]; update(); } });
    const grid = AE.el("div", { class: "ae-row ae-patterns" }, root);

    function update() {
      const patterns = state.states[`${n},${k}`];
      root.dataset.n = String(n);
      root.dataset.k = String(k);
      grid.textContent = "";
      Object.entries(patterns).forEach(([name, p], c) => {
        const card = AE.el("div", { class: "ae-model", "data-pattern": c, "data-edges": p.edges,
          "data-max-path": p.max_path }, grid);
        const svg = AE.svg("svg", { viewBox: `0 0 ${SIDE} ${SIDE}`, class: "ae-mask", role: "img",
          "aria-label": `${name}: ${p.edges} edges, maximum path length ${p.max_path}` }, card);
        AE.svg("rect", { x: 0, y: 0, width: SIDE, height: SIDE, class: "ae-mask-frame" }, svg);
        const cell = SIDE / n;
        let d = "";
        p.mask.forEach((row, i) => [...row].forEach((bit, j) => {
          if (bit === "1") d += `M${j * cell},${i * cell}h${cell}v${cell}h${-cell}z`;
        }));
        AE.svg("path", { d, class: "ae-mask-cells" }, svg);
        AE.el("p", {}, card, `${name}: ${p.edges} edges, max. path ${p.max_path}`);
      });
    }
    update();
  });
}());
