// Contrast of the first-reading switch in the page's theme (tests/test_first_reading.py): its text
// against its own background (or what shows through it), its border against what lies behind it.
() => {
  @include colour.js
  const s = document.querySelector(".first-reading-switch"), style = getComputedStyle(s);
  return {theme: document.documentElement.dataset.theme, pressed: s.getAttribute("aria-pressed"),
          text: ratio(style.color, behind(s)), border: ratio(style.borderTopColor, behind(s.parentElement))};
}
