// WCAG's contrast, for the scripts that `@include colour.js` (tests/visits.py's script() pastes it in):
// rgb() of a CSS colour, its relative luminance, whether it is opaque, the opaque background behind an
// element (white at the root), and the contrast ratio of two colours.
  const rgb = c => (c.match(/[\d.]+/g) || ["0", "0", "0", "0"]).map(Number);
  const lum = c => { const [r, g, b] = rgb(c).slice(0, 3).map(v => { v /= 255;
    return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  const opaque = c => { const v = rgb(c); return v.length < 4 || v[3] > 0.5; };
  const behind = e => { for (let x = e; x; x = x.parentElement) {
      const c = getComputedStyle(x).backgroundColor; if (opaque(c)) return c; }
    return "rgb(255, 255, 255)"; };
  const ratio = (a, b) => { const [h, l] = [lum(a), lum(b)].sort((x, y) => y - x);
    return (h + 0.05) / (l + 0.05); };
