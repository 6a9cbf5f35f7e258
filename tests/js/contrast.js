// Contrast of what a figure, an equation or a table cell draws against what lies behind it, in the
// page's theme. An equation's colour is MathJax's text colour; a figure draws black ink on its own
// background (read from its top-left pixel) or, where that pixel is transparent, on the page's; a
// brightness() filter on the image (book.css, dark mode) dims that background as the reader sees it.
async () => {
  @include colour.js
  const visible = e => e.checkVisibility({opacityProperty: true, visibilityProperty: true});
  const main = document.querySelector("main") || document.body;
  const out = [];
  for (const e of main.querySelectorAll("mjx-container")) {
    if (!visible(e)) continue;
    out.push({what: "equation", name: e.textContent.slice(0, 40),
              ratio: ratio(getComputedStyle(e).color, behind(e))});
  }
  for (const img of main.querySelectorAll("img")) {
    if (!visible(img) || !img.naturalWidth) continue;
    const canvas = document.createElement("canvas");
    canvas.width = Math.min(img.naturalWidth, 64); canvas.height = Math.min(img.naturalHeight, 64);
    const ctx = canvas.getContext("2d");
    ctx.drawImage(img, 0, 0);
    const [r, g, b, a] = ctx.getImageData(1, 1, 1, 1).data;
    const dim = getComputedStyle(img).filter.match(/brightness\(([\d.]+)(%?)\)/);
    const factor = dim ? Number(dim[1]) / (dim[2] ? 100 : 1) : 1;
    const ground = (a > 128 ? [r, g, b] : rgb(behind(img)).slice(0, 3)).map(v => Math.min(255, v * factor));
    out.push({what: "figure", name: (img.getAttribute("alt") || "").slice(0, 40),
              ratio: ratio("rgb(0, 0, 0)", `rgb(${ground.join(", ")})`)});
  }
  for (const cell of main.querySelectorAll("table td, table th")) {
    if (!visible(cell) || !cell.textContent.trim()) continue;
    out.push({what: "table", name: cell.textContent.trim().slice(0, 40),
              ratio: ratio(getComputedStyle(cell).color, behind(cell))});
  }
  return out;
}
