// Where a chapter's summary sits (tests/test_first_reading.py): is it the first thing under the title,
// the boxes of its text and of its figure, does anything push the page sideways, and the contrast of
// its label and its text against what lies behind them, in the page's theme.
() => {
  const rgb = c => (c.match(/[\d.]+/g) || ["0", "0", "0", "0"]).map(Number);
  const lum = c => { const [r, g, b] = rgb(c).slice(0, 3).map(v => { v /= 255;
    return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  const opaque = c => { const v = rgb(c); return v.length < 4 || v[3] > 0.5; };
  const behind = e => { for (let x = e; x; x = x.parentElement) {
      const c = getComputedStyle(x).backgroundColor; if (opaque(c)) return c; }
    return "rgb(255, 255, 255)"; };
  const ratio = e => { const [h, l] = [lum(getComputedStyle(e).color), lum(behind(e))].sort((x, y) => y - x);
    return (h + 0.05) / (l + 0.05); };
  const boxes = document.querySelectorAll("main .chapter-summary");
  const box = boxes[0];
  const rect = e => { const r = e.getBoundingClientRect();
    return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; };
  const h1 = document.querySelector("main article h1");
  const img = box ? box.querySelector(".chapter-summary-figure img") : null;
  return {
    summaries: boxes.length, first: !!(box && h1 && h1.nextElementSibling === box),
    text: box ? rect(box.querySelector(".chapter-summary-text")) : null,
    figure: box ? rect(box.querySelector(".chapter-summary-figure")) : null,
    box: box ? rect(box) : null, viewport: document.documentElement.clientWidth,
    page_wider: document.documentElement.scrollWidth > document.documentElement.clientWidth + 1,
    image_loaded: !!(img && img.complete && img.naturalWidth > 0), alt: img ? img.alt : "",
    theme: document.documentElement.dataset.theme,
    contrast: box ? [...box.querySelectorAll(".chapter-summary-text p")].map(ratio) : [],
  };
}
