/* The worked example, explorable: drag the four people's vectors (or move them with the arrow keys)
 * and watch S = X Xᵀ/√2, W = softmax(S), the attention graph, Y = W X and the column sums of W follow. The plane
 * carries its axis numbers, −2 to 2, and the axes' names: the first coordinate along its bottom, the
 * second along its left. Each person's name sits on the side of its circle that keeps it off the others.
 * Its state (explorables.worked_state: X and the graph figure's node positions) and
 * its keys: attention_graph.explorables.SCHEMAS["worked"]. */
(function () {
  "use strict";
  const AE = window.AttentionExplore;
  if (!AE) return;

  const LIMIT = 2.5;  // the plane shown: [−LIMIT, LIMIT]²
  const SIZE = 300;
  const MARGIN = 18;  // the plane's room for its axes' names, left and bottom
  const toSvg = (x, y) => [SIZE / 2 + (x / LIMIT) * (SIZE / 2 - 12), SIZE / 2 - (y / LIMIT) * (SIZE / 2 - 12)];
  const toPlane = (px, py) => [((px - SIZE / 2) / (SIZE / 2 - 12)) * LIMIT, -((py - SIZE / 2) / (SIZE / 2 - 12)) * LIMIT];
  const clamp = (v) => Math.max(-LIMIT, Math.min(LIMIT, v));
  const snap = (v, step) => Math.round(clamp(v) / step) * step;
  const round2 = (v) => Math.round(v * 100) / 100;

  AE.register("worked", (root, state) => {
    const labels = state.labels;
    const X0 = state.X.map((row) => row.slice());
    let X = X0.map((row) => row.slice());

    const { controls } = AE.frame(root, "Drag a person's open circle, or Tab to it and press the "
      + "arrow keys (Shift: finer steps). The dot is where the layer moves them, y_i = Σ_j W_ij x_j.", { status: null });
    const figures = AE.el("div", { class: "ae-row" }, root);

    // The plane: inputs (draggable), outputs, an arrow from each input to its output. Its user space is
    // 0..SIZE both ways; the viewBox adds a margin on the left and at the bottom for the axes' names.
    const planeBox = AE.output(figures, "The people's vectors: open circle x_i, dot y_i", { cls: "ae-plane-box" });
    const plane = AE.svg("svg", { viewBox: `${-MARGIN} 0 ${SIZE + MARGIN} ${SIZE + MARGIN}`, class: "ae-plane",
      role: "img", "aria-label": "The plane of the four vectors" }, planeBox);
    for (let k = -2; k <= 2; k++) {
      const [a] = toSvg(k, 0), [, b] = toSvg(0, k);
      AE.svg("line", { x1: a, y1: 0, x2: a, y2: SIZE, class: k === 0 ? "ae-axis" : "ae-grid" }, plane);
      AE.svg("line", { x1: 0, y1: b, x2: SIZE, y2: b, class: k === 0 ? "ae-axis" : "ae-grid" }, plane);
    }
    // The axis numbers: the first coordinate along the bottom edge, the second along the left edge,
    // at the grid lines (on the edges, not on the axes, so no person's circle covers one).
    const sign = (k) => (k < 0 ? "−" + -k : String(k));
    for (let k = -2; k <= 2; k++) {
      const [a] = toSvg(k, 0), [, b] = toSvg(0, k);
      AE.svg("text", { x: a, y: SIZE - 2, class: "ae-tick", "text-anchor": "middle", "data-axis": "first",
        "data-tick": k }, plane, sign(k));
      if (k !== 0) AE.svg("text", { x: 2, y: b + 4, class: "ae-tick", "text-anchor": "start", "data-axis": "second",
        "data-tick": k }, plane, sign(k));
    }
    AE.svg("text", { x: SIZE / 2, y: SIZE + MARGIN - 4, class: "ae-axis-label", "text-anchor": "middle",
      "data-axis": "first" }, plane, "first coordinate \u2192");
    AE.svg("text", { x: -MARGIN + 12, y: SIZE / 2, class: "ae-axis-label", "text-anchor": "middle", "data-axis": "second",
      transform: `rotate(-90 ${-MARGIN + 12} ${SIZE / 2})` }, plane, "second coordinate \u2192");
    const moves = labels.map(() => AE.svg("line", { class: "ae-move" }, plane));
    const outs = labels.map((_, i) => AE.svg("circle", { r: 4.5, class: "ae-output", "data-person": i }, plane));
    const points = labels.map((label, i) => {
      const g = AE.svg("g", { class: "ae-point", tabindex: 0, role: "slider", "data-person": i,
        "aria-roledescription": "movable point", "aria-valuemin": -LIMIT, "aria-valuemax": LIMIT,
        "aria-label": `${label}'s vector: arrow keys move it` }, plane);
      // The whole point is its handle: an invisible circle of radius 24 (a fingertip) under the drawn
      // one, and the name, so a drag that starts on the name moves the point too.
      AE.svg("circle", { r: 24, class: "ae-hit" }, g);
      AE.svg("circle", { r: 9 }, g);
      AE.svg("text", { x: 12, y: -10, "text-anchor": "middle", "dominant-baseline": "central", class: "ae-name" },
        g, label);
      return g;
    });
    const names = points.map((g) => g.querySelector("text"));

    // The graph, beside the plane: the nodes 92 units from the centre, so a self-loop (its node's radius
    // 22 and 26 beyond) stays inside the 300-unit box on a phone.
    const pos = state.layout.map(([x, y]) => [SIZE / 2 + 92 * x, SIZE / 2 - 92 * y]);
    const drawGraph = AE.graph(figures, labels, pos);

    const tables = AE.el("div", { class: "ae-row ae-tables" }, root);
    const S = AE.matrixTable(tables, "S = X Xᵀ/√2: query i against key j", labels, labels,
      { name: "S", rowAxis: "i", colAxis: "j" });
    const W = AE.matrixTable(tables, "W = softmax(S), 0 to 1: row i attends to column j", labels,
      labels, { name: "W", heat: true, rowAxis: "i", colAxis: "j" });
    const Y = AE.matrixTable(tables, "Y = W X: person i's new vector", labels, ["first", "second"],
      { name: "Y", rowAxis: "i", colAxis: "coordinate" });
    const R = AE.matrixTable(tables, "Attention paid to j: Σ_i W_ij, column j's sum", labels, ["paid to j"],
      { name: "paid", rowAxis: "j", colAxis: "column sum" });
    const Xt = AE.matrixTable(tables, "X: person i's vector", labels, ["first", "second"],
      { name: "X", digits: 2, rowAxis: "i", colAxis: "coordinate" });
    // One plain sentence says what the column sum is; a reader can check it by hand on the W table.
    // "Graph tools on attention" comes back to it with the tools of network science.
    const note = AE.el("p", { class: "ae-legend", "data-note": "paid" }, root,
      "The attention paid to a person j is the sum of column j of W: how much attention j is paid by "
      + "everybody, j included. It adds up the weights of the arrows drawn from j, the arrows that carry "
      + "j's value. ");
    AE.el("a", { href: "graph_tools.html#who-is-attended-the-strengths" }, note, "Graph tools on attention");
    note.append(" comes back to it to say who is attended the most.");
    const buttons = AE.el("div", { class: "ae-control" }, controls);
    AE.button(buttons, "Back to the book's vectors", () => { X = X0.map((row) => row.slice()); update(); });

    function update() {
      const Sm = AE.scaledScores(X, X);
      const Wm = AE.softmax(Sm);
      const Ym = AE.matmul(Wm, X);
      const sOut = AE.outStrength(Wm);
      S.set(Sm);
      W.set(Wm);
      Y.set(Ym);
      R.set(sOut.map((x) => [x]));
      Xt.set(X);
      drawGraph(Wm);
      labels.forEach((label, i) => {
        const [px, py] = toSvg(X[i][0], X[i][1]);
        const [qx, qy] = toSvg(Ym[i][0], Ym[i][1]);
        points[i].setAttribute("transform", `translate(${px},${py})`);
        points[i].dataset.x = String(X[i][0]);
        points[i].dataset.y = String(X[i][1]);
        points[i].setAttribute("aria-valuenow", String(X[i][0]));
        points[i].setAttribute("aria-valuetext", `${label} at (${AE.fmt(X[i][0], 2)}, ${AE.fmt(X[i][1], 2)})`);
        outs[i].setAttribute("cx", qx);
        outs[i].setAttribute("cy", qy);
        moves[i].setAttribute("x1", px);
        moves[i].setAttribute("y1", py);
        moves[i].setAttribute("x2", qx);
        moves[i].setAttribute("y2", qy);
      });
      placeNames();
    }

    // Each name beside its circle, on the side that keeps it off the other names, the circles and the
    // plane's edges: eight places around the circle, tried in turn, name by name, the least covered kept
    // (the first place, up and to the right, wins a tie). Widths from the text's font, so it works hidden.
    // The axis numbers keep the strips along the left and bottom edges (EDGE_LEFT, EDGE_BOTTOM units).
    const EDGE_LEFT = 16, EDGE_BOTTOM = 14;
    const ruler = document.createElement("canvas").getContext("2d");
    const PLACES = [[1, -1], [1, 0], [0, -1], [-1, -1], [-1, 0], [1, 1], [0, 1], [-1, 1]];
    const overlap = (a, b) => Math.max(0, Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0))
      * Math.max(0, Math.min(a.y1, b.y1) - Math.max(a.y0, b.y0));
    function placeNames() {
      const at = X.map(([x, y]) => toSvg(x, y));
      const circles = at.map(([x, y]) => ({ x0: x - 10, x1: x + 10, y0: y - 10, y1: y + 10 }));
      const placed = [];
      names.forEach((text, i) => {
        const css = getComputedStyle(text);
        ruler.font = `${css.fontWeight} ${css.fontSize} ${css.fontFamily}`;
        const w = ruler.measureText(text.textContent).width + 2;
        const h = (parseFloat(css.fontSize) || 12) + 2;
        const [px, py] = at[i];
        let best = null;
        PLACES.forEach(([dx, dy], k) => {
          const cx = px + dx * (11 + w / 2) * (dy === 0 ? 1 : 0.6), cy = py + dy * (10 + h / 2);
          const box = { x0: cx - w / 2, x1: cx + w / 2, y0: cy - h / 2, y1: cy + h / 2 };
          let cost = k * 1e-3;
          placed.forEach((b) => { cost += 10 * overlap(box, b); });
          circles.forEach((b, j) => { if (j !== i) cost += overlap(box, b); });
          cost += 10 * (Math.max(0, EDGE_LEFT - box.x0) + Math.max(0, box.x1 - SIZE) + Math.max(0, -box.y0)
            + Math.max(0, box.y1 - (SIZE - EDGE_BOTTOM))) * h;
          if (best === null || cost < best.cost) best = { cost, cx, cy, box };
        });
        placed.push(best.box);
        text.setAttribute("x", (best.cx - px).toFixed(2));
        text.setAttribute("y", (best.cy - py).toFixed(2));
      });
    }

    points.forEach((g, i) => {
      g.addEventListener("pointerdown", (event) => {
        event.preventDefault();
        g.setPointerCapture(event.pointerId);
        g.focus();
        const move = (e) => {
          const p = AE.svgPoint(plane, e);
          const [x, y] = toPlane(p.x, p.y);
          X[i] = [round2(snap(x, 0.01)), round2(snap(y, 0.01))];
          update();
        };
        const up = () => {
          g.removeEventListener("pointermove", move);
          g.removeEventListener("pointerup", up);
          g.removeEventListener("pointercancel", up);
        };
        g.addEventListener("pointermove", move);
        g.addEventListener("pointerup", up);
        g.addEventListener("pointercancel", up);
      });
      g.addEventListener("keydown", (event) => {
        const step = event.shiftKey ? 0.01 : 0.1;
        const delta = { ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, step], ArrowDown: [0, -step] }[event.key];
        if (!delta) return;
        event.preventDefault();
        X[i] = [round2(clamp(X[i][0] + delta[0])), round2(clamp(X[i][1] + delta[1]))];
        update();
      });
    });
    update();
  });
}());
