/* From fixed to computed, explorable: one slider t from mean aggregation on the path (t = 0) through
 * masked attention (t = 1) to attention on the complete graph (t = 2), on the same four people.
 * Every state is the package's (graph.fixed_to_computed), computed at build time; nothing is
 * computed here but the distances to the five models of the comparison figure: each model's
 * largest gap, max over i, j of |W(t)_ij − W_ij|, a difference of weights (shares of a row, 0 to 1),
 * so a gap lies between 0 and 1 too. The nodes and the cards name the people by initials, under a legend.
 * On a phone (explore.css, below 600 px) it shows one model's card, the nearest to the slider's graph
 * unless the reader picks one, so the slider, the graph and that card fit one screen; "all five" shows
 * every card, one under another, each the column's width at most.
 * Its state (explorables.fixed_state) and its keys: attention_graph.explorables.SCHEMAS["fixed"]. */
(function () {
  "use strict";
  const AE = window.AttentionExplore;
  if (!AE) return;

  const SIZE = 300;

  AE.register("fixed", (root, state) => {
    const labels = state.labels;
    const names = state.model_names;
    const distance = (A, B) => Math.max(...A.flatMap((row, i) => row.map((a, j) => Math.abs(a - B[i][j]))));
    const phase = (t) => (t === 0 ? "mean aggregation on the path with self-loops"
      : t < 1 ? "the weights on the path move from the mean toward masked attention"
        : t === 1 ? "masked attention on the path with self-loops"
          : t < 2 ? "the edges off the path fade in" : "attention on the complete graph");

    const { controls, status } = AE.frame(root, "Slide from a fixed graph to a computed one. At 0 each person "
      + "takes the plain mean of their path neighbours and themselves. At 1 attention sets those weights, still "
      + "on the path. At 2 everyone attends to everyone.");
    const figures = AE.el("div", { class: "ae-row" }, root);
    const pos = state.layout.map(([x, y]) => [SIZE / 2 + 105 * x, SIZE / 2 - 105 * y]);
    const drawGraph = AE.graph(figures, labels, pos, { title: "The attention graph of W(t)" });
    const tables = AE.el("div", { class: "ae-tables" }, figures);
    const W = AE.matrixTable(tables, "W(t), 0 to 1: row i attends to column j", labels, labels,
      { name: "W", heat: true, rowAxis: "i", colAxis: "j" });
    const Y = AE.matrixTable(tables, "Y = W(t) X: person i's new vector", labels, ["first", "second"],
      { name: "Y", rowAxis: "i", colAxis: "coordinate" });

    // The gap, typeset as the page's formulas read: |W(t)_ij − W_ij| with italic letters and subscripts.
    const note = AE.el("p", { class: "ae-hint ae-gap-note" }, root, "Under each of the five models, its largest "
      + "gap: the largest difference ");
    AE.typeset(AE.el("span", { class: "ae-math", "data-name": "gap-formula" }, note), "|*W*(*t*)_ij \u2212 *W*_ij|");
    note.append(" between a weight of the slider's graph and the same weight of that model. Every weight "
      + "here lies between 0 and 1, so a gap also lies between 0 and 1. (The rows of attention and of "
      + "the mean sum to 1; a GCN's rows need not.) A gap of 0 means the slider's graph is that model.");
    // On a phone only one card shows: the nearest model, or the one picked here (hidden on wide screens).
    const pickRow = AE.el("label", { class: "ae-control ae-model-pick" }, root, "Model shown: ");
    const pick = AE.el("select", { "data-name": "model-pick" }, pickRow);
    AE.el("option", { value: "" }, pick, "the nearest");
    names.forEach((name) => AE.el("option", { value: name }, pick, name));
    AE.el("option", { value: "*" }, pick, "all, one under another");
    const modelsBox = AE.output(root, "Each model's W, 0 to 1: row i attends to j",
      { cls: "ae-models-box" });
    AE.namesLegend(modelsBox, labels);
    const models = AE.el("div", { class: "ae-row ae-models" }, modelsBox);
    const short = AE.initials(labels);
    const cards = names.map((name) => {
      const card = AE.el("div", { class: "ae-model", "data-model": name }, models);
      const heat = AE.matrixTable(card, name, short, short, { name, heat: true, digits: 2, rowAxis: "i", colAxis: "j" });
      heat.set(state.models[name]);
      const p = AE.el("p", {}, card, "largest gap ");
      const gap = AE.el("span", { "data-name": "gap" }, p);
      return { card, gap };
    });

    const slider = AE.choice(controls, { label: "From fixed (0) to computed (2): t", values: state.ts, value: state.start, symbol: "t",
      show: (t) => AE.fmt(t, 2), onInput: (t, v) => {
        const s = state.states[v];
        root.dataset.t = String(t);
        status.textContent = `t = ${AE.fmt(t, 2)}: ${phase(t)}.`;
        W.set(s.W);
        Y.set(s.Y);
        drawGraph(s.W);
        const gaps = names.map((name, c) => {
          const gap = distance(s.W, state.models[name]);
          AE.show(cards[c].gap, gap);
          cards[c].card.classList.toggle("ae-match", gap === 0);
          cards[c].card.dataset.match = String(gap === 0);
          return gap;
        });
        nearest = gaps.indexOf(Math.min(...gaps));
        showCard();
      } });
    let nearest = 0;
    function showCard() {
      const shown = pick.value ? names.indexOf(pick.value) : nearest;
      cards.forEach(({ card }, c) => card.classList.toggle("ae-shown", pick.value === "*" || c === shown));
    }
    pick.addEventListener("change", showCard);
    slider.refresh();
  });
}());
