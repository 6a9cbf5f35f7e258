// Where the worked example's plane point (x, y) lies on the screen, through the SVG's own transform
// (tests/test_explorables.py drags a person's point there).
([root, x, y]) => {
  const svg = document.querySelector(root + " svg.ae-plane");
  const p = svg.createSVGPoint();
  p.x = 150 + (x / 2.5) * 138; p.y = 150 - (y / 2.5) * 138;
  const s = p.matrixTransform(svg.getScreenCTM());
  return [s.x, s.y];
}
