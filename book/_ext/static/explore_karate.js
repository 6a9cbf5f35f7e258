/* The karate club, explorable: a seed slider for the projections of the untrained layer; for each
 * seed the club drawn as the communities figure draws it (an edge per friendship, as wide as the
 * mutual attention; nodes by recorded faction; the members the communities misplace ringed) and
 * the ARI. Every state is the package's (karate.club_run), computed at build time.
 * The edges are undirected (the mutual attention has no direction), so its key says so.
 * Its state (explorables.karate_state) and its keys: attention_graph.explorables.SCHEMAS["karate"]. */
(function () {
  "use strict";
  const AE = window.AttentionExplore;
  if (!AE) return;

  const SIZE = 320;

  AE.register("karate", (root, state) => {
    const xs = state.layout.map((p) => p[0]), ys = state.layout.map((p) => p[1]);
    const [x0, x1, y0, y1] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
    const scale = (SIZE - 36) / Math.max(x1 - x0, y1 - y0);
    const pos = state.layout.map(([x, y]) => [18 + (x - x0) * scale, SIZE - 18 - (y - y0) * scale]);

    const { controls, status } = AE.frame(root, "Slide the seed of the random projections; the ringed members "
      + "are those the communities of that layer's attention graph put on the wrong side. The ARI, the adjusted "
      + "Rand index, scores how well the split agrees with the recorded one: 1 when they are the same, about 0 "
      + "for a split made by chance.", { status: "ae-result" });
    const clubBox = AE.output(root, `The club: a node a member, numbered 1 to ${state.labels.length}; its place says nothing, `
      + "its colour the recorded side", { cls: "ae-club-box" });
    const svg = AE.svg("svg", { viewBox: `0 0 ${SIZE} ${SIZE}`, class: "ae-club", role: "img" }, clubBox);
    const sides = AE.el("p", { class: "ae-legend", "data-key": "factions" }, clubBox);
    [["ae-swatch ae-faction-0", "Mr. Hi's side"], ["ae-swatch ae-faction-1", "the Officer's side"],
      ["ae-swatch ae-ring", "ringed: put on the wrong side"]].forEach(([cls, words], c) => {
      if (c) sides.append(" \u00b7 ");
      AE.el("span", { class: cls, "aria-hidden": "true" }, sides);
      sides.append(` ${words}`);
    });
    const key = AE.el("p", { class: "ae-key ae-key-text", "data-key": "undirected" }, clubBox,
      "An edge per friendship, as wide as the mutual attention (W");
    AE.el("sub", {}, key, "ij");
    key.append(" + W");
    AE.el("sub", {}, key, "ji");
    key.append(")/2 of the pair: it has no direction, so no arrow.");
    const lines = state.friends.map(([i, j]) => AE.svg("line", { x1: pos[i][0], y1: pos[i][1], x2: pos[j][0],
      y2: pos[j][1], class: "ae-friend", "data-i": i, "data-j": j }, svg));
    const rings = pos.map(([x, y]) => AE.svg("circle", { cx: x, cy: y, r: 13, class: "ae-wrong" }, svg));
    pos.forEach(([x, y], i) => {
      AE.svg("circle", { cx: x, cy: y, r: 9.5, class: `ae-faction-${state.club[i]}` }, svg);
      AE.svg("text", { x, y, "text-anchor": "middle", "dominant-baseline": "central", class: "ae-club-label" }, svg,
        state.labels[i]);
    });

    // Most seeds give the same split: a line under the slider counts them, and names the members this
    // seed places otherwise than the most common split (a split is its set of misplaced members).
    const splitOf = (s) => s.wrong.slice().sort((a, b) => a - b).join(",");
    const counts = new Map();
    state.seeds.forEach((s) => counts.set(splitOf(s), (counts.get(splitOf(s)) || 0) + 1));
    const [common, commonCount] = [...counts.entries()].reduce((a, b) => (b[1] > a[1] ? b : a));
    const commonWrong = state.seeds.find((s) => splitOf(s) === common).wrong;
    const agree = AE.el("p", { class: "ae-legend", "data-note": "agreement" });

    const seedChoice = AE.choice(controls, { label: "Seed", values: state.seeds.map((s) => s.seed), value: state.start,
      onInput: (_, v) => {
        const s = state.seeds[v];
        const top = Math.max(...s.mutual, 1e-12);
        root.dataset.seed = String(s.seed);
        lines.forEach((line, e) => {
          line.dataset.weight = String(s.mutual[e]);
          line.setAttribute("stroke-width", (0.3 + 4 * s.mutual[e] / top).toFixed(3));
        });
        rings.forEach((ring, i) => ring.style.display = s.wrong.includes(i) ? "" : "none");
        svg.dataset.wrong = s.wrong.join(",");
        svg.setAttribute("aria-label", `The club at seed ${s.seed}: ${s.wrong.length} members misplaced`);
        status.textContent = `Seed ${s.seed}: ARI `;
        AE.show(AE.el("span", { "data-name": "ari" }, status), s.ari);
        status.append(`, ${s.wrong.length} member(s) misplaced.`);
        const same = counts.get(splitOf(s));
        const moved = state.labels.filter((_, i) => s.wrong.includes(i) !== commonWrong.includes(i));
        agree.dataset.same = String(same);
        agree.dataset.moved = moved.join(",");
        const names = moved.length > 1 ? `${moved.slice(0, -1).join(", ")} and ${moved[moved.length - 1]}` : moved[0];
        agree.textContent = (same > 1 ? `${same} of ${state.seeds.length} seeds give this same split. `
          : `No other of the ${state.seeds.length} seeds gives this split. `)
          + (moved.length === 0 ? "It is the most common split."
            : `Against the most common split (${commonCount} seeds), member${moved.length > 1 ? "s" : ""} `
              + `${names} ${moved.length > 1 ? "are" : "is"} on the other side.`);
      } });
    controls.append(agree);
    seedChoice.refresh();
  });
}());
