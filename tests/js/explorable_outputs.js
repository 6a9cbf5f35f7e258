// What an explorable shows as outputs (tests/test_explorables.py): every table with its caption and the
// names of its axes; every drawing (an SVG but the key's arrow) with the title of its box (.ae-out) and
// its width; the smallest text as displayed (SVG text: its font size times its user units' screen scale;
// HTML text: its font size), the space the drawings could take (the explorable's content width), and
// whether any two visible texts of one drawing overlap.
root => {
  const el = document.querySelector(root);
  const visible = e => e.checkVisibility({opacityProperty: true, visibilityProperty: true});
  const style = getComputedStyle(el);
  const content = el.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  // A matrix names its axes (th[data-axis]); a table of named columns (the online trace) names each
  // column in its header, the first naming the rows.
  const said = e => (e ? e.textContent.trim() : "");
  const tables = [...el.querySelectorAll("table.ae-matrix")].filter(visible).map(t => {
    const heads = [...t.querySelectorAll("thead th")].map(said);
    const named = !t.querySelector("th[data-axis]");
    return {name: t.dataset.matrix || t.className, caption: said(t.querySelector("caption")),
            row: named ? heads[0] : said(t.querySelector('th[data-axis="row"]')),
            col: named ? (heads.slice(1).every(Boolean) ? heads.slice(1).join(", ") : "") :
              said(t.querySelector('th[data-axis="col"]'))};
  });
  const drawings = [...el.querySelectorAll(".ae-body svg")].filter(s => visible(s) && !s.closest(".ae-key"))
    .map(s => {
      const box = s.closest(".ae-out, .ae-model");
      const title = box ? box.querySelector(":scope > .ae-title") : null;
      const axes = [...s.querySelectorAll("text[data-axis]")].filter(t => !t.classList.contains("ae-tick"))
        .map(t => t.textContent.trim());
      const texts = [...s.querySelectorAll("text")].filter(t => visible(t) && t.textContent.trim());
      const rects = texts.map(t => t.getBoundingClientRect());
      let overlaps = 0;
      rects.forEach((a, i) => rects.slice(i + 1).forEach(b => {
        const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
        const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
        if (w > 0.5 && h > 0.5) overlaps += 1;
      }));
      return {cls: s.getAttribute("class"), title: title ? title.textContent.trim() : "", axes,
              width: s.getBoundingClientRect().width, overlaps};
    });
  let smallest = null, smallestText = "";
  for (const t of el.querySelectorAll(".ae-body svg text")) {
    if (!visible(t) || !t.textContent.trim()) continue;
    const m = t.getScreenCTM();
    const px = parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b);
    if (smallest === null || px < smallest) { smallest = px; smallestText = t.textContent; }
  }
  const walker = document.createTreeWalker(el.querySelector(".ae-body"), NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const parent = walker.currentNode.parentElement;
    if (!walker.currentNode.nodeValue.trim() || parent.closest("svg") || !visible(parent)) continue;
    const px = parseFloat(getComputedStyle(parent).fontSize);
    if (smallest === null || px < smallest) { smallest = px; smallestText = walker.currentNode.nodeValue; }
  }
  // Text that shows a subscript raw ("W_ij"), not typeset.
  const raw = [...el.querySelectorAll(".ae-body *")].filter(e => visible(e) && !e.closest("script"))
    .flatMap(e => [...e.childNodes].filter(c => c.nodeType === Node.TEXT_NODE && /\w_\w/.test(c.nodeValue))
      .map(c => c.nodeValue.trim()));
  return {tables, drawings, content, smallest, smallestText, raw};
}
