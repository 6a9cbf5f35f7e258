// Contrast of the explorable's hint text and of its SVG text against the background behind it
// (WCAG's relative luminance; tests/test_explorables.py).
root => {
  const rgb = s => (s.match(/[\d.]+/g) || []).slice(0, 3).map(Number);
  const f = c => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
  const lum = ([r, g, b]) => {
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
  let node = document.querySelector(root), bg = 'rgba(0, 0, 0, 0)';
  while (node && /rgba\(0, 0, 0, 0\)|transparent/.test(bg)) {
    bg = getComputedStyle(node).backgroundColor; node = node.parentElement;
  }
  if (/rgba\(0, 0, 0, 0\)/.test(bg)) bg = 'rgb(255, 255, 255)';
  const ratio = (a, b) => {
    const [x, y] = [lum(rgb(a)), lum(rgb(b))].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05);
  };
  const el = document.querySelector(root);
  const text = el.querySelector('.ae-hint');
  const svgText = el.querySelector('svg text:not(.ae-club-label)');
  return {text: ratio(getComputedStyle(text).color, bg),
          svg: svgText ? ratio(getComputedStyle(svgText).fill, bg) : 99};
}
