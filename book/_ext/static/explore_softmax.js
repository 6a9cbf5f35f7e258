/* Softmax and scale, explorable: one row of raw scores q·k_j (random q and keys in d dimensions);
 * a temperature τ, the dimension d and the 1/√d scale on or off; the weights and their entropy.
 * Its state (explorables.softmax_state: rows[k] is the raw row for dims[k], d the first shown) and its
 * keys: attention_graph.explorables.SCHEMAS["softmax"]. */
(function () {
  "use strict";
  const AE = window.AttentionExplore;
  if (!AE) return;

  const W_BARS = 300, H_BARS = 140, LEFT = 44, TOP = 8, BOTTOM = 32;

  AE.register("softmax", (root, state) => {
    let k = state.dims.indexOf(state.d);
    let logTau = 0;
    let scaled = true;

    const { controls } = AE.frame(root, `One query against ${state.rows[0].length} keys, entries `
      + "standard normal. Slide the temperature and the dimension; switch the 1/√d scale off.", { status: null });
    const tauOut = AE.el("span", { "data-name": "tau", hidden: "" }, root);
    AE.slider(controls, { label: "Temperature τ", min: -1, max: 1, step: 0.05, value: 0, symbol: "τ",
      show: (v) => AE.fmt(10 ** v, 2), onInput: (v) => { logTau = v; update(); } });
    AE.choice(controls, { label: "Dimension d", values: state.dims, value: state.d, symbol: "d", onInput: (_, v) => { k = v; update(); } });
    const row = AE.el("div", { class: "ae-control" }, controls);
    const id = AE.uid("ae-check");
    const box = AE.el("input", { type: "checkbox", id, checked: "" }, row);
    AE.el("label", { for: id }, row, "divide the scores by √d");
    box.addEventListener("change", () => { scaled = box.checked; update(); });

    // The bars with their axes: the weight (0 to 1) up the left, one bar a key along the bottom.
    const barsBox = AE.output(root, "The weights of one row, softmax(s/τ): one bar a key, each from 0 to 1");
    const svg = AE.svg("svg", { viewBox: `0 0 ${W_BARS + LEFT} ${H_BARS + TOP + BOTTOM}`, class: "ae-bars",
      role: "img" }, barsBox);
    const bars = AE.svg("g", { transform: `translate(${LEFT} ${TOP})` }, svg);
    AE.svg("line", { x1: 0, y1: H_BARS, x2: W_BARS, y2: H_BARS, class: "ae-axis" }, bars);
    AE.svg("line", { x1: 0, y1: 0, x2: 0, y2: H_BARS, class: "ae-axis" }, bars);
    [0, 0.5, 1].forEach((w) => {
      AE.svg("line", { x1: -4, y1: H_BARS * (1 - w), x2: 0, y2: H_BARS * (1 - w), class: "ae-axis" }, bars);
      AE.svg("text", { x: -7, y: H_BARS * (1 - w), "text-anchor": "end", "dominant-baseline": "central" }, bars,
        String(w));
    });
    AE.svg("text", { x: -LEFT + 12, y: H_BARS / 2, "text-anchor": "middle", class: "ae-label",
      transform: `rotate(-90 ${-LEFT + 12} ${H_BARS / 2})`, "data-axis": "weight" }, bars, "weight");
    const n = state.rows[0].length;
    AE.svg("text", { x: W_BARS / 2, y: H_BARS + 22, "text-anchor": "middle", class: "ae-label", "data-axis": "key" }, bars,
      `key j = 1, …, ${n} (dashed: 1/${n}, uniform)`);
    const rects = state.rows[0].map((_, j) => AE.svg("rect", { class: "ae-bar", "data-key": j,
      x: (j + 0.15) * (W_BARS / n), width: 0.7 * (W_BARS / n) }, bars));
    const uniform = AE.svg("line", { x1: 0, x2: W_BARS, class: "ae-uniform" }, bars);
    const readout = AE.el("p", { class: "ae-result", "aria-live": "polite" }, root);
    const parts = {};
    ["largest weight", "entropy", "of at most"].forEach((name, c) => {
      if (c) readout.append(c === 1 ? "; its entropy " : " nats, of at most ");
      else readout.append("Largest weight ");
      parts[name] = AE.el("span", { "data-name": ["max", "entropy", "uniform"][c] }, readout);
    });
    readout.append(" (a uniform row).");

    function update() {
      const tau = 10 ** logTau;
      const d = state.dims[k];
      const s = state.rows[k].map((x) => (scaled ? x / Math.sqrt(d) : x));
      const p = AE.softmaxRow(s, tau);
      tauOut.dataset.value = String(tau);
      root.dataset.d = String(d);
      root.dataset.scaled = String(scaled);
      rects.forEach((rect, j) => {
        const h = p[j] * H_BARS;
        rect.setAttribute("y", H_BARS - h);
        rect.setAttribute("height", h);
        rect.dataset.value = String(p[j]);
      });
      uniform.setAttribute("y1", H_BARS * (1 - 1 / n));
      uniform.setAttribute("y2", H_BARS * (1 - 1 / n));
      svg.setAttribute("aria-label", `Weights of the ${n} keys: ${p.map((x) => AE.fmt(x)).join(", ")}`);
      AE.show(parts["largest weight"], Math.max(...p));
      AE.show(parts.entropy, AE.entropy(p));
      AE.show(parts["of at most"], Math.log(n));
    }
    update();
  });
}());
