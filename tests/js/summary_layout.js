// Where a chapter's summary sits (tests/test_first_reading.py): is it the first thing under the title,
// the boxes of its text and of its figure, does anything push the page sideways, and the contrast of
// its label and its text against what lies behind them, in the page's theme.
() => {
  @include colour.js
  const ratioOf = e => ratio(getComputedStyle(e).color, behind(e));
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
    contrast: box ? [...box.querySelectorAll(".chapter-summary-text p")].map(ratioOf) : [],
  };
}
