// What tests/test_layout.py checks of a page, read once it has settled (tests/visits.py). Any element of the article that reaches past the
// column's right edge (or before its left) must sit in a box with overflow-x auto/scroll inside the
// column; a box that does scroll must show a cue (a background image: the shadows of book.css).
() => {
  const article = document.querySelector("main article") || document.querySelector("main");
  const col = article.getBoundingClientRect();
  const visible = e => e.checkVisibility({opacityProperty: true, visibilityProperty: true});
  const all = sel => Array.from(article.querySelectorAll(sel)).filter(visible);
  const describe = e => (e.id ? "#" + e.id : e.tagName.toLowerCase() + "." + (e.className.baseVal ??
                         e.className).toString().split(" ")[0]) + ": " + e.textContent.trim().slice(0, 60);
  // Up from e: the first box that clips it decides. One that scrolls (inside the column) holds it;
  // one that hides the overflow cuts it off; none at all and it pushes past the column.
  const held = (e, r) => {
    for (let a = e.parentElement; a && a !== article; a = a.parentElement) {
      const ox = getComputedStyle(a).overflowX;
      if (ox === "visible") continue;
      const b = a.getBoundingClientRect();
      if (r.right <= b.right + 1 && r.left >= b.left - 1) continue;  // fits in this box
      if (ox === "auto" || ox === "scroll") return b.right <= col.right + 1 && b.left >= col.left - 1;
      return false;
    }
    return false;
  };
  // Every element of the article that reaches past the column and is not held; of nested ones,
  // the outermost only.
  const loose = new Set();
  for (const e of article.querySelectorAll("*")) {
    const r = e.getBoundingClientRect();
    if (e.parentElement.closest("mjx-container")) continue;  // a formula is judged as a whole
    if (r.width === 0 || r.right <= col.right + 1 && r.left >= col.left - 1) continue;
    if (visible(e) && !held(e, r)) loose.add(e);
  }
  const over = [...loose].filter(e => { for (let a = e.parentElement; a; a = a.parentElement)
                                          if (loose.has(a)) return false; return true; }).map(describe);
  const cueless = [];
  for (const e of all("mjx-container[display='true'], div.math, .pst-scrollable-table-container, figure")) {
    if (e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).backgroundImage === "none")
      cueless.push(describe(e));
  }
  // Display equations and tables wider than their column, with the widths: what a reader must scroll
  // sideways to read (tests/test_layout.py: none on a phone but those it exempts). An equation is
  // named by its label, else by its section's id and the start of its TeX; a table by its section's
  // id and its first header cell.
  const where = e => (e.closest("section[id]") || {id: "?"}).id;
  const tex = e => { try { return MathJax.startup.document.getMathItemsWithin(e)[0].math.trim(); }
                     catch (err) { return e.textContent.trim(); } };
  const wide = [];
  for (const e of all("div.math, mjx-container[display='true']")) {
    if (e.matches("mjx-container") && e.closest("div.math")) continue;  // judged with its div
    const inner = e.querySelector("mjx-container[display='true']") || e;
    const width = Math.max(e.scrollWidth, inner.scrollWidth), room = Math.min(e.clientWidth, col.width);
    const name = e.id ? e.id.replace(/^equation-/, "") : where(e) + ": " + tex(e).replace(/\s+/g, " ").slice(0, 50);
    if (width > room + 1) wide.push({kind: "equation", name, width, room});
  }
  for (const t of all("table")) {
    const box = t.closest(".pst-scrollable-table-container") || t.parentElement;
    const width = Math.max(t.getBoundingClientRect().width, box.scrollWidth);
    const room = Math.min(box.clientWidth, col.width);
    const head = (t.querySelector("th, td") || t).textContent.trim().replace(/\s+/g, " ").slice(0, 40);
    if (width > room + 1) wide.push({kind: "table", name: where(t) + ": " + head, width: Math.round(width), room});
  }
  const badges = all(".check-badge > summary").map(s => ({
    words: s.innerText.trim().split(/\s+/).filter(Boolean).length, text: s.innerText.trim(),
    title: s.getAttribute("title") || "", aria: s.getAttribute("aria-label") || "",
    scope: s.parentElement.querySelector(".check-scope").textContent.trim()}));
  const boxes = Array.from(document.querySelectorAll(".admonition, .sd-dropdown, details"))
    .filter(e => !e.closest("details.how-checked"))
    .filter(e => visible(e) && /^How this page is checked/.test(
      (e.querySelector(".admonition-title, summary, .sd-summary-title") || e).textContent.trim()));
  const blocks = Array.from(document.querySelectorAll("details.how-checked"));
  const last = Array.from(article.querySelectorAll("section, details.how-checked, .admonition, p"))
                    .filter(visible).pop();
  const marks = Array.from(document.querySelectorAll(".glued")).slice(0, 50)
    .map(e => getComputedStyle(e).textDecorationLine).filter(l => l !== "none");
  return {
    theme: document.documentElement.dataset.theme,
    page_wider: document.documentElement.scrollWidth > document.documentElement.clientWidth + 1,
    over, cueless, wide, badges, marks,
    wide_code: all("pre").filter(e => e.scrollWidth > e.clientWidth + 1).map(describe),
    stray_boxes: boxes.map(describe),
    blocks: blocks.map(b => ({open: b.open, visible_body: visible(b.querySelector(".how-checked-body")),
                              last: !!last && (b.contains(last) || b === last)})),
  };
}
