// What tests/test_figures.py checks of a page's figures at 390 px, read once the page has settled: for every
// figure (a figure's image, an explorable's drawing) its displayed width against the text column, and
// the smallest of its texts as displayed. An image's SVG is fetched and read as matplotlib writes it:
// each text is a group <g id="text_N"> whose glyphs are scaled by scale(s -s) for a font of 100 s
// user units (pt); shown, a user unit is the image's displayed width over the SVG's viewBox width.
// An inline SVG's text is its computed font size times the screen scale of its user units.
// A heatmap's cell numbers (a number drawn straight into axes that hold an image) are read by their
// digits, which DejaVu Sans draws 0.729 of the font size tall (1493 of 2048 units): "cells" is the
// smallest digit height shown, in px. The font size alone let 8 pt cells pass at 10.6 px, digits 7.7 px.
async () => {
  const article = document.querySelector("main article") || document.querySelector("main");
  const style = getComputedStyle(article);
  const box = article.getBoundingClientRect();
  const column = box.width - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  const visible = e => e.checkVisibility({opacityProperty: true, visibilityProperty: true});
  const GLYPHS = /scale\(([\d.e+-]+) -[\d.e+-]+\)/;
  const DIGIT = 0.729, NUMBER = /^[\u2212-]?\d*\.?\d+%?$/;
  const found = [];
  for (const img of article.querySelectorAll("figure img")) {
    if (!visible(img)) continue;
    await img.decode().catch(() => null);  // measured once it has its size
    const fig = img.closest("figure");
    const shown = img.getBoundingClientRect().width;
    const entry = {name: fig.id || img.getAttribute("src"), width: shown, column, smallest: null, text: "",
                   cells: null, cell: ""};
    if (/\.svg($|\?)/.test(img.src)) {
      const svg = new DOMParser().parseFromString(await (await fetch(img.src)).text(), "image/svg+xml")
        .documentElement;
      const view = (svg.getAttribute("viewBox") || "").split(/[\s,]+/).map(Number);
      const unit = shown / (view.length === 4 ? view[2] : parseFloat(svg.getAttribute("width")));
      for (const g of svg.querySelectorAll("g[id^='text_']")) {
        const scaled = [...g.querySelectorAll("g[transform]")].find(e => GLYPHS.test(e.getAttribute("transform")));
        if (!scaled) continue;
        const px = 100 * parseFloat(GLYPHS.exec(scaled.getAttribute("transform"))[1]) * unit;
        const words = [...g.childNodes].find(c => c.nodeType === Node.COMMENT_NODE);
        const said = words ? words.nodeValue.trim() : "";
        if (entry.smallest === null || px < entry.smallest) {
          entry.smallest = px;
          entry.text = said;
        }
        const axes = g.parentElement;
        const inCell = axes && /^axes_/.test(axes.id || "") && axes.querySelector("image") && NUMBER.test(said);
        if (inCell && (entry.cells === null || DIGIT * px < entry.cells)) {
          entry.cells = DIGIT * px;
          entry.cell = said;
        }
      }
    }
    found.push(entry);
  }
  for (const svg of article.querySelectorAll(".explorable svg")) {
    if (!visible(svg) || svg.closest("mjx-container") || svg.parentElement.closest("svg")) continue;
    const host = svg.closest(".explorable");
    const entry = {name: (host.dataset.title || host.id || "explorable") + ": svg." + (svg.getAttribute("class") || ""),
                   width: svg.getBoundingClientRect().width, column, smallest: null, text: ""};
    for (const t of svg.querySelectorAll("text")) {
      if (!visible(t) || !t.textContent.trim()) continue;
      const m = t.getScreenCTM();  // its scale, whatever its rotation
      const px = parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b);
      if (entry.smallest === null || px < entry.smallest) {
        entry.smallest = px;
        entry.text = t.textContent.trim();
      }
    }
    found.push(entry);
  }
  return found;
}
