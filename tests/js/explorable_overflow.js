// What of an explorable reaches out of the text column: (root selector) -> [{what, left, right}], empty
// when everything it shows lies inside the column (the article's content box) and no part of it needs a
// horizontal scrollbar (a scrolling box whose content is wider than it counts too).
root => {
  const box = document.querySelector(root);
  const column = (box.closest("main article") || box.parentElement).getBoundingClientRect();
  const name = e => `${e.tagName.toLowerCase()}${e.className && typeof e.className === "string" ? "." + e.className.trim().split(/\s+/).join(".") : ""}`;
  const out = [];
  for (const e of [box, ...box.querySelectorAll("*")]) {
    const r = e.getBoundingClientRect();
    if (r.width === 0 || r.height === 0 || getComputedStyle(e).visibility === "hidden") continue;
    const scrolls = /auto|scroll/.test(getComputedStyle(e).overflowX) && e.scrollWidth > e.clientWidth + 1;
    if (r.left < column.left - 0.5 || r.right > column.right + 0.5 || scrolls) {
      out.push({ what: name(e), left: Math.round(r.left), right: Math.round(r.right),
                 column: [Math.round(column.left), Math.round(column.right)], scrolls });
    }
  }
  return out.slice(0, 10);
};
