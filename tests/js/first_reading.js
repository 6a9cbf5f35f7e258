// The first-reading state of a page (tests/test_first_reading.py): the header's switch, and for each
// kind of block a first reading skips, how many the page has and whether they are shown (their own
// display; null when the page has none).
() => {
  const switches = document.querySelectorAll(".first-reading-switch");
  const s = switches[0];
  const kinds = {proofs: ".prf-proof", badges: ".check-strength", checks: "details.how-checked",
                 asides: ".admonition.technical", kernels: ".kernel-code",
                 second: ".second-reading, .tag_second-reading"};
  const counts = {}, shown = {};
  for (const [kind, selector] of Object.entries(kinds)) {
    const found = [...document.querySelectorAll(selector)];
    const on = found.map(e => getComputedStyle(e).display !== "none");
    counts[kind] = found.length;
    shown[kind] = !found.length ? null : on.every(Boolean) ? true : on.some(Boolean) ? "some" : false;
  }
  let stored = null;
  try { stored = localStorage.getItem("first-reading"); } catch (err) { stored = "unreadable"; }
  return {
    switches: switches.length, tag: s ? s.tagName : null, pressed: s ? s.getAttribute("aria-pressed") : null,
    in_header: !!(s && s.closest(".bd-header-article")),
    switch_shown: !!s && getComputedStyle(s).display !== "none" && s.checkVisibility(),
    first_reading: document.documentElement.classList.contains("first-reading"),
    stored, counts, shown,
  };
}
