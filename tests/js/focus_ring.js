// The focused element's focus ring (tests/test_first_reading.py): is it :focus-visible, and its outline.
() => {
  const e = document.activeElement, s = getComputedStyle(e);
  return {focus_visible: e.matches(":focus-visible"), outline_width: parseFloat(s.outlineWidth) || 0,
          outline_style: s.outlineStyle};
}
