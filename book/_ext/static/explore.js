/* The book's explorable figures: the shared module (book/_ext/explorables.py says how a page uses it).
 *
 * Loaded on every page; it does nothing where the page has no <div class="explorable">. Each
 * explorable's own file (explore_<name>.js) calls AttentionExplore.register(name, init); on load,
 * init(div, state) builds the figure inside the div, state being the JSON the package computed at
 * build time (the <script type="application/json" data-explorable-state> inside the div). The
 * script also carries the state's schema (data-explorable-schema, attention_graph.explorables.SCHEMAS):
 * the state is checked against it first, so a missing key or a wrong shape stops the explorable with
 * a message naming the key (in the div's data-error and the console), never a half-drawn figure.
 *
 * The numbers follow the package's definitions (code/attention_graph), and tests/test_explorables.py
 * compares them with it in Chromium. Every number shown carries its full value in data-value.
 */
(function () {
  "use strict";
  const AE = {};

  // ---------------------------------------------------------------------------------------------
  // Numbers
  // ---------------------------------------------------------------------------------------------

  AE.dot = (a, b) => a.reduce((sum, ai, k) => sum + ai * b[k], 0);

  /** S_ij = q_i · k_j / √d  (eq-scaled-scores). */
  AE.scaledScores = (Q, K) => Q.map((q) => K.map((k) => AE.dot(q, k) / Math.sqrt(q.length)));

  /** W_j = exp((s_j − m)/τ) / Σ_l exp((s_l − m)/τ), m = max_l s_l; −∞ is a masked key (weight 0). */
  AE.softmaxRow = (s, tau = 1) => {
    const m = Math.max(...s.filter((x) => x > -Infinity));
    const e = s.map((x) => (x === -Infinity ? 0 : Math.exp((x - m) / tau)));
    const Z = e.reduce((a, b) => a + b, 0);
    return e.map((x) => x / Z);
  };

  AE.softmax = (S, tau = 1) => S.map((row) => AE.softmaxRow(row, tau));

  /** (A B)_ij = Σ_k A_ik B_kj. */
  AE.matmul = (A, B) => A.map((row) => B[0].map((_, j) => row.reduce((s, a, k) => s + a * B[k][j], 0)));

  AE.transpose = (A) => A[0].map((_, j) => A.map((row) => row[j]));

  /** H = −Σ_j p_j ln p_j in nats, 0 ln 0 = 0 (worked_example.row_entropy). */
  AE.entropy = (p) => -p.reduce((s, x) => s + (x > 0 ? x * Math.log(x) : 0), 0);

  /** s_out(j) = Σ_i W_ij: column j's sum, the out-strength (AttentionGraph.out_strength). */
  AE.outStrength = (W) => W[0].map((_, j) => W.reduce((s, row) => s + row[j], 0));

  /** m = max_j s_j, ℓ = Σ_j e^{s_j − m}, o = Σ_j e^{s_j − m} v_j / ℓ  (eq-block-output). */
  AE.blockState = (s, V) => {
    const m = Math.max(...s);
    const P = s.map((x) => Math.exp(x - m));
    const ell = P.reduce((a, b) => a + b, 0);
    const o = V[0].map((_, c) => P.reduce((acc, p, j) => acc + p * V[j][c], 0) / ell);
    return { m, ell, o };
  };

  /** The state of the union of two disjoint blocks  (eq-merge-output, blockwise.merge). */
  AE.merge = (a, b) => {
    const m = Math.max(a.m, b.m);
    const alpha = Math.exp(a.m - m);
    const beta = Math.exp(b.m - m);
    const ell = alpha * a.ell + beta * b.ell;
    const o = a.o.map((oa, c) => (alpha * a.ell * oa + beta * b.ell * b.o[c]) / ell);
    return { m, ell, o };
  };

  /** The running (m, ℓ, o) of one query after each block of keys (blockwise.online_trace). */
  AE.onlineTrace = (q, K, V, blockSize) => {
    const trace = [];
    let state = null;
    for (let start = 0; start < K.length; start += blockSize) {
      const keys = [];
      for (let j = start; j < Math.min(start + blockSize, K.length); j++) keys.push(j);
      const s = AE.scaledScores([q], keys.map((j) => K[j]))[0];
      const block = AE.blockState(s, keys.map((j) => V[j]));
      state = state === null ? block : AE.merge(state, block);
      trace.push({ keys, m: state.m, ell: state.ell, o: state.o.slice() });
    }
    return trace;
  };

  // ---------------------------------------------------------------------------------------------
  // The state's schema (the same language as attention_graph.explorables: its docstring defines it)
  // ---------------------------------------------------------------------------------------------

  const SCALAR = {
    number: (x) => typeof x === "number" && Number.isFinite(x),
    int: (x) => Number.isInteger(x),
    string: (x) => typeof x === "string",
    bool: (x) => typeof x === "boolean",
  };
  const ARTICLE = { number: "a finite number", int: "an int", string: "a string", bool: "a bool" };
  const kind = (x) => (Array.isArray(x) ? "list" : x === null ? "null" : typeof x);

  /** Throw an Error naming the key at fault unless x matches schema; sizes binds the named lengths. */
  const check = (x, schema, where, sizes) => {
    const size = (dim, got, at) => {
      dim = String(dim).trim();
      if (dim === "*") return;
      const want = /^\d+$/.test(dim) ? Number(dim) : (dim in sizes ? sizes[dim] : (sizes[dim] = got));
      if (got !== want) throw new Error(`${at} has length ${got}; the schema wants ${dim} = ${want}`);
    };
    if (typeof schema === "string") {
      const m = /^(number|int|string|bool)(?:\[([^\]]*)\])?$/.exec(schema);
      if (!m) throw new Error(`schema at ${where}: "${schema}" is not a type`);
      const shape = m[2] ? m[2].split(",") : [];
      const leaf = (y, axis, at) => {
        if (axis === shape.length) {
          if (!SCALAR[m[1]](y)) throw new Error(`${at} must be ${ARTICLE[m[1]]}; got ${JSON.stringify(y)}`);
          return;
        }
        if (!Array.isArray(y)) throw new Error(`${at} must be a list (shape [${m[2]}]); got ${kind(y)}`);
        size(shape[axis], y.length, at);
        y.forEach((item, k) => leaf(item, axis + 1, `${at}[${k}]`));
      };
      leaf(x, 0, where);
    } else if ("$list" in schema) {
      if (!Array.isArray(x)) throw new Error(`${where} must be a list; got ${kind(x)}`);
      size(schema.$length ?? "*", x.length, where);
      x.forEach((item, k) => check(item, schema.$list, `${where}[${k}]`, sizes));
    } else {
      if (kind(x) !== "object") throw new Error(`${where} must be an object; got ${kind(x)}`);
      if ("$map" in schema) {
        Object.entries(x).forEach(([key, item]) => check(item, schema.$map, `${where}['${key}']`, sizes));
        return;
      }
      const missing = Object.keys(schema).filter((k) => !(k in x)).sort();
      const extra = Object.keys(x).filter((k) => !(k in schema)).sort();
      if (missing.length || extra.length) {
        throw new Error(`${where} must have the keys ${JSON.stringify(Object.keys(schema).sort())}; `
          + `missing ${JSON.stringify(missing)}, unknown ${JSON.stringify(extra)}`);
      }
      Object.entries(schema).forEach(([key, sub]) => check(x[key], sub, `${where}.${key}`, sizes));
    }
  };

  /** state, if it matches schema (see attention_graph.explorables); else an Error naming the key at fault. */
  AE.checkState = (name, state, schema) => { check(state, schema, name, {}); return state; };

  // ---------------------------------------------------------------------------------------------
  // Drawing and controls
  // ---------------------------------------------------------------------------------------------

  const SVG = "http://www.w3.org/2000/svg";
  let uid = 0;
  AE.uid = (prefix) => `${prefix}-${++uid}`;

  /** An element (SVG when svg is true) with attributes, appended to parent, holding text. */
  AE.el = (tag, attrs = {}, parent = null, text = null, svg = false) => {
    const node = svg ? document.createElementNS(SVG, tag) : document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
    if (text !== null) node.textContent = text;
    if (parent) parent.appendChild(node);
    return node;
  };
  AE.svg = (tag, attrs = {}, parent = null, text = null) => AE.el(tag, attrs, parent, text, true);

  /**
   * Append text to node, each "_ij" of it a subscript and each "*W*" an italic letter, as the page's
   * formulas show them: "y_i = Σ_j W_ij x_j", or "*v*_j flows from *j* to *i*" with italic v, j and i.
   */
  AE.typeset = (node, text) => {
    text.split(/(_\w+|\*\w+\*)/).forEach((part, k) => {
      if (k % 2 === 0) {
        if (part) node.append(part);
      } else if (part[0] === "_") AE.el("sub", {}, node, part.slice(1));
      else AE.el("i", {}, node, part.slice(1, -1));
    });
    return node;
  };

  /** x with `digits` decimals and a true minus sign. */
  AE.fmt = (x, digits = 3) => (Object.is(Math.round(x * 10 ** digits), -0) ? 0 : x)
    .toFixed(digits).replace("-", "\u2212");

  /** Show x in node: formatted text, the full value (as JavaScript prints it) in data-value. */
  AE.show = (node, x, digits = 3) => {
    node.dataset.value = String(x);
    node.textContent = AE.fmt(x, digits);
  };

  /**
   * A table of numbers: rows × cols cells under its title (the caption); returns {table, set(M)}; cells
   * carry data-row, data-col. Its axes are labelled: rowAxis in the corner (what a row is), colAxis
   * over the column names (what a column is), both th[data-axis].
   */
  AE.matrixTable = (parent, caption, rowLabels, colLabels,
    { digits = 3, heat = false, name = "", rowAxis = "", colAxis = "" } = {}) => {
    const wrap = AE.el("div", { class: "ae-table-wrap" }, parent);
    const table = AE.el("table", { class: "ae-matrix", "data-matrix": name }, wrap);
    AE.typeset(AE.el("caption", {}, table), caption);
    const thead = AE.el("thead", {}, table);
    const axes = AE.el("tr", { class: "ae-axes" }, thead);
    AE.el("th", { scope: "col", rowspan: 2, class: "ae-axis-name", "data-axis": "row" }, axes, rowAxis ? `${rowAxis} \u2193` : "");
    AE.el("th", { scope: "colgroup", colspan: colLabels.length, class: "ae-axis-name", "data-axis": "col" }, axes,
      colAxis ? `${colAxis} \u2192` : "");
    const head = AE.el("tr", {}, thead);
    colLabels.forEach((c) => AE.el("th", { scope: "col" }, head, c));
    const body = AE.el("tbody", {}, table);
    const cells = rowLabels.map((r, i) => {
      const tr = AE.el("tr", {}, body);
      AE.el("th", { scope: "row" }, tr, r);
      return colLabels.map((_, j) => AE.el("td", { "data-row": i, "data-col": j }, tr));
    });
    const set = (M) => M.forEach((row, i) => row.forEach((x, j) => {
      const td = cells[i][j];
      AE.show(td, x, digits);
      if (heat) {
        td.style.setProperty("--ae-w", String(Math.max(0, Math.min(1, x))));
      }
    }));
    return { table, set };
  };

  /** A labelled range input; onInput(value) on every move (arrow keys move it by one step). Its
   *  aria-valuetext is the value its output shows, after `symbol =` when one is given ("τ = 0.50"),
   *  so a screen reader says what the reader sees, not the input's raw value. */
  AE.slider = (parent, { label, min, max, step, value, onInput, show = (v) => String(v), symbol = null }) => {
    const id = AE.uid("ae-slider");
    const row = AE.el("div", { class: "ae-control" }, parent);
    AE.el("label", { for: id }, row, label);
    const input = AE.el("input", { type: "range", id, min, max, step, value }, row);
    const out = AE.el("output", { for: id }, row);
    const shown = (v) => {
      out.textContent = show(v);
      input.setAttribute("aria-valuetext", symbol === null ? out.textContent : `${symbol} = ${out.textContent}`);
    };
    const update = () => {
      const v = Number(input.value);
      shown(v);
      onInput(v);
    };
    input.addEventListener("input", update);
    input.refresh = update;
    shown(Number(value));
    return input;
  };

  /** A slider over a list of values: onInput(values[k], k) on every move; starts at `value`. */
  AE.choice = (parent, { label, values, value, onInput, show = (x) => String(x), symbol = null }) => {
    const start = values.indexOf(value);
    if (start < 0) throw new Error(`${label}: the first value ${value} is not among ${JSON.stringify(values)}`);
    return AE.slider(parent, { label, min: 0, max: values.length - 1, step: 1, value: start, symbol,
      show: (k) => show(values[k]), onInput: (k) => onInput(values[k], k) });
  };

  /**
   * What every explorable opens with: its hint, the row of its controls and, unless status is null,
   * a line that says its state (read aloud as it changes; status is that line's class).
   */
  AE.frame = (root, hint, { status = "ae-status" } = {}) => {
    AE.typeset(AE.el("p", { class: "ae-hint" }, root), hint);
    const controls = AE.el("div", { class: "ae-controls" }, root);
    const line = status === null ? null : AE.el("p", { class: status, "aria-live": "polite" }, root);
    return { controls, status: line };
  };

  /**
   * The book's one key to the arrows of an attention graph, as the figures draw it
   * (attention_graph.plots.graphs.direction_key): an arrow from j to i, carrying v_j with weight W_ij.
   */
  AE.directionKey = (parent) => {
    const key = AE.el("p", { class: "ae-key", "data-key": "direction" }, parent);
    const pair = AE.el("span", { class: "ae-key-pair", "aria-hidden": "true" }, key);
    AE.el("i", {}, pair, "j");
    const edge = AE.el("span", { class: "ae-key-edge" }, pair);
    AE.typeset(AE.el("span", {}, edge), "*W*_ij");
    const svg = AE.svg("svg", { viewBox: "0 0 40 8", class: "ae-key-arrow" }, edge);
    AE.svg("path", { d: "M1,4 H32", class: "ae-key-line" }, svg);
    AE.svg("path", { d: "M31,0.5 L39,4 L31,7.5 z", class: "ae-arrowhead" }, svg);
    AE.el("i", {}, pair, "i");
    AE.typeset(AE.el("span", { class: "ae-key-words" }, key), "*v*_j flows from *j* to *i*, with weight *W*_ij");
    return key;
  };

  /** An output's box with its title above it (p.ae-title); the output is drawn into the box returned. */
  AE.output = (parent, title, { cls = "" } = {}) => {
    const box = AE.el("div", { class: `ae-out ${cls}`.trim() }, parent);
    AE.typeset(AE.el("p", { class: "ae-title" }, box), title);
    return box;
  };

  /** The people's initials, when they tell the people apart (else the labels themselves). */
  AE.initials = (labels) => {
    const short = labels.map((l) => l.slice(0, 1));
    return new Set(short).size === labels.length ? short : labels.slice();
  };

  /** A legend that says which name each initial stands for ("C Carla · A Ana · …"), p.ae-legend. */
  AE.namesLegend = (parent, labels) => {
    const short = AE.initials(labels);
    const p = AE.el("p", { class: "ae-legend", "data-key": "names" }, parent);
    labels.forEach((l, i) => {
      if (i) p.append(" \u00b7 ");
      AE.el("b", {}, p, short[i]);
      p.append(` ${l}`);
    });
    return p;
  };

  AE.button = (parent, label, onClick) => {
    const b = AE.el("button", { type: "button", class: "ae-button" }, parent, label);
    b.addEventListener("click", onClick);
    return b;
  };

  /** The point of the SVG's user space under a pointer event. */
  AE.svgPoint = (svg, event) => {
    const p = svg.createSVGPoint();
    p.x = event.clientX;
    p.y = event.clientY;
    return p.matrixTransform(svg.getScreenCTM().inverse());
  };

  /**
   * A directed weighted graph on fixed node positions [x, y] (SVG units) under its title, the direction
   * key under it; the nodes carry the labels' initials and a legend says whose (AE.namesLegend).
   * Returns update(W): the arrow of W_ij points from j to i, the way the message v_j flows, wider and
   * darker as W_ij grows; W_ii is a loop. Each arrow carries data-i, data-j and data-weight.
   */
  AE.graph = (parent, labels, pos, { size = 300, radius = 22, title = "The attention graph of W" } = {}) => {
    const box = AE.el("div", { class: "ae-graph-box ae-out" }, parent);
    AE.typeset(AE.el("p", { class: "ae-title" }, box), title);
    const svg = AE.svg("svg", { viewBox: `0 0 ${size} ${size}`, class: "ae-graph", role: "img" }, box);
    AE.directionKey(box);
    const short = AE.initials(labels);  // the nodes carry initials, a legend says whose
    if (short.some((s, i) => s !== labels[i])) AE.namesLegend(box, labels);
    const marker = AE.uid("ae-arrow");
    const defs = AE.svg("defs", {}, svg);
    const m = AE.svg("marker", { id: marker, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 4,
      markerHeight: 4, orient: "auto-start-reverse", markerUnits: "strokeWidth" }, defs);
    AE.svg("path", { d: "M0,1 L10,5 L0,9 z", class: "ae-arrowhead" }, m);
    const n = labels.length;
    const cx = pos.reduce((s, p) => s + p[0], 0) / n;
    const cy = pos.reduce((s, p) => s + p[1], 0) / n;
    const edges = [];
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        let d;
        if (i === j) {  // a loop on the side away from the centre
          const [x, y] = pos[i];
          const len = Math.hypot(x - cx, y - cy) || 1;
          const ux = (x - cx) / len, uy = (y - cy) / len;
          const ax = x + ux * radius, ay = y + uy * radius;
          const px = -uy * 12, py = ux * 12;
          d = `M${ax + px * 0.6},${ay + py * 0.6} C${ax + ux * 34 + px * 1.6},${ay + uy * 34 + py * 1.6} `
            + `${ax + ux * 34 - px * 1.6},${ay + uy * 34 - py * 1.6} ${ax - px * 0.6},${ay - py * 0.6}`;
        } else {  // from j to i, bent to the right so the two arrows of a pair do not overlap
          const [x1, y1] = pos[j], [x2, y2] = pos[i];
          const len = Math.hypot(x2 - x1, y2 - y1);
          const ux = (x2 - x1) / len, uy = (y2 - y1) / len;
          const bend = 0.18 * len;
          const mx = (x1 + x2) / 2 - uy * bend, my = (y1 + y2) / 2 + ux * bend;
          const s = [x1 + ux * radius - uy * 6, y1 + uy * radius + ux * 6];
          const e = [x2 - ux * radius - uy * 6, y2 - uy * radius + ux * 6];
          d = `M${s[0]},${s[1]} Q${mx},${my} ${e[0]},${e[1]}`;
        }
        const path = AE.svg("path", { d, class: "ae-edge", "data-i": i, "data-j": j, "marker-end": `url(#${marker})` }, svg);
        edges.push(path);
      }
    }
    labels.forEach((label, i) => {
      const g = AE.svg("g", { class: "ae-node" }, svg);
      AE.svg("circle", { cx: pos[i][0], cy: pos[i][1], r: radius }, g);
      AE.svg("text", { x: pos[i][0], y: pos[i][1], "text-anchor": "middle", "dominant-baseline": "central" }, g, short[i]);
    });
    return (W) => {
      edges.forEach((path) => {
        const w = W[path.dataset.i][path.dataset.j];
        path.dataset.weight = String(w);
        path.setAttribute("stroke-width", (0.3 + 9 * w).toFixed(3));
        path.setAttribute("stroke-opacity", (0.25 + 0.75 * Math.min(1, 2 * w)).toFixed(3));
        path.style.display = w > 0 ? "" : "none";
      });
      svg.setAttribute("aria-label", `Attention graph: ${labels.map((l, i) =>
        `${l} receives from ${labels.map((k, j) => `${k} ${AE.fmt(W[i][j])}`).join(", ")}`).join("; ")}`);
    };
  };

  // ---------------------------------------------------------------------------------------------
  // Registration and start-up
  // ---------------------------------------------------------------------------------------------

  const inits = {};
  let started = false;
  // A file that registers after the start (deferred scripts may run after the first start) starts its own.
  AE.register = (name, init) => { inits[name] = init; if (started) AE.start(); };

  AE.start = () => {
    started = true;
    document.querySelectorAll("div.explorable[data-explorable]").forEach((div) => {
      const init = inits[div.dataset.explorable];
      const data = div.querySelector("script[data-explorable-state]");
      if (!init || !data || div.dataset.ready) return;
      try {
        const name = div.dataset.explorable;
        const schema = data.dataset.explorableSchema;
        if (!schema) throw new Error(`${name}: the state has no schema (attention_graph.explorables.explorable_data writes it)`);
        const state = AE.checkState(name, JSON.parse(data.textContent), JSON.parse(schema));
        const body = AE.el("div", { class: "ae-body" });
        div.appendChild(body);
        init(body, state, div);
        div.hidden = false;
        div.dataset.ready = "true";
      } catch (err) {  // leave the static figure alone; the tests read the reason here
        div.dataset.error = String(err && err.message);
        div.querySelectorAll(".ae-body").forEach((body) => body.remove());
        console.error(`explorable ${div.dataset.explorable}: ${div.dataset.error}`);
      }
    });
  };

  window.AttentionExplore = AE;
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", AE.start);
  else setTimeout(AE.start, 0);
}());
