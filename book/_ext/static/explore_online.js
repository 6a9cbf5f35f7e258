/* The online softmax, explorable: Ana's query reads the keys a block at a time; step through the
 * running maximum m, normaliser ℓ and output o, and see the end equal the dense output.
 * Its state (explorables.online_state: the row of X that asks, X as keys and values, the dense output,
 * the block size of the page's table) and its keys: attention_graph.explorables.SCHEMAS["online"]. */
(function () {
  "use strict";
  const AE = window.AttentionExplore;
  if (!AE) return;

  AE.register("online", (root, state) => {
    const labels = state.labels;
    const q = state.X[state.query];
    const n = labels.length;
    let blockSize = state.block_size;
    let trace = [];
    let step = 0;

    const { controls, status } = AE.frame(root, `${labels[state.query]}'s query reads the people a block at a `
      + "time. Choose the block size, then step through: each step merges one block into (m, ℓ, o).");
    AE.slider(controls, { label: "Block size", min: 1, max: n, step: 1, value: blockSize,
      onInput: (v) => { blockSize = v; trace = AE.onlineTrace(q, state.X, state.X, v); step = 0; update(); } });
    const buttons = AE.el("div", { class: "ae-control" }, controls);
    const back = AE.button(buttons, "Back", () => { step = Math.max(0, step - 1); update(); });
    const next = AE.button(buttons, "Step", () => { step = Math.min(trace.length, step + 1); update(); });
    back.dataset.action = "back";
    next.dataset.action = "step";
    AE.button(buttons, "Start over", () => { step = 0; update(); }).dataset.action = "reset";

    const wrap = AE.el("div", { class: "ae-table-wrap" }, root);
    const table = AE.el("table", { class: "ae-matrix ae-trace" }, wrap);
    AE.el("caption", {}, table, `${labels[state.query]}'s running state (m, ℓ, o) after each block of keys`);
    const head = AE.el("tr", {}, AE.el("thead", {}, table));
    ["step", "keys read", "m", "ℓ", "o (first)", "o (second)"].forEach((h) => AE.el("th", { scope: "col" }, head, h));
    const body = AE.el("tbody", {}, table);
    const result = AE.el("p", { class: "ae-result" }, root);

    function update() {
      body.textContent = "";
      trace.slice(0, step).forEach((s, k) => {
        const tr = AE.el("tr", { "data-step": k + 1, class: k + 1 === step ? "ae-current" : "" }, body);
        AE.el("th", { scope: "row" }, tr, String(k + 1));
        AE.el("td", {}, tr, s.keys.map((j) => labels[j]).join(", "));
        [s.m, s.ell, s.o[0], s.o[1]].forEach((x, c) => AE.show(AE.el("td", { "data-name": ["m", "ell", "o0", "o1"][c] }, tr), x));
      });
      back.disabled = step === 0;
      next.disabled = step === trace.length;
      status.textContent = step === 0 ? "Nothing read yet: press Step."
        : `Step ${step} of ${trace.length}: ${trace[step - 1].keys.length} key(s) merged.`;
      result.textContent = "";
      if (step === trace.length) {
        const o = trace[step - 1].o;
        const gap = Math.max(...o.map((x, c) => Math.abs(x - state.dense[c])));
        result.append("Dense attention gives (");
        AE.show(AE.el("span", { "data-name": "dense0" }, result), state.dense[0]);
        result.append(", ");
        AE.show(AE.el("span", { "data-name": "dense1" }, result), state.dense[1]);
        result.append("); the largest difference from the final o is ");
        const g = AE.el("span", { "data-name": "gap" }, result);
        g.dataset.value = String(gap);
        g.textContent = gap.toExponential(1).replace("-", "\u2212");
        result.append(".");
      }
    }

    // The page opens before the first step (the static table beside it shows the complete trace);
    // a new block size starts the reading over too.
    trace = AE.onlineTrace(q, state.X, state.X, blockSize);
    step = 0;
    update();
  });
}());
