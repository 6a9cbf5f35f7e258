// The "First reading" switch (book/_ext/first_reading.py). On, the page hides, on screen only, what a
// first reading skips: proofs, class badges, the "How this page is checked" block, the technical
// asides and the kernel code under a formula (first_reading.css). The choice is kept in localStorage, so every page opens as the reader
// left the last one; this file runs in the head, so the state applies before the body is drawn.
(() => {
  const KEY = "first-reading";
  const root = document.documentElement;
  const stored = () => {
    try { return localStorage.getItem(KEY) === "on"; } catch (err) { return false; }
  };
  const apply = on => root.classList.toggle("first-reading", on);
  apply(stored());

  // A link into something a first reading hides (a technical aside, a proof) opens that one box.
  const HIDDEN = ".prf-proof, .kernel-code, details.how-checked, .admonition.technical";
  const reveal = () => {
    if (!location.hash) return;
    let target = null;
    try { target = document.getElementById(decodeURIComponent(location.hash.slice(1))); } catch (err) { return; }
    const box = target && target.closest(HIDDEN);
    if (box) box.classList.add("opened-by-link");
  };
  window.addEventListener("hashchange", reveal);

  const sync = button => button.setAttribute("aria-pressed", String(root.classList.contains("first-reading")));

  const build = () => {
    const place = document.querySelector(".article-header-buttons");
    if (!place || place.querySelector(".first-reading-switch")) return;
    const button = document.createElement("button");
    button.type = "button";
    button.className = "btn btn-sm first-reading-switch";
    button.textContent = "First reading";
    button.title = "Hide proofs, kernel code, badges, checks and technical asides";
    sync(button);
    button.addEventListener("click", () => {
      const on = !root.classList.contains("first-reading");
      apply(on);
      document.querySelectorAll(".opened-by-link").forEach(box => box.classList.remove("opened-by-link"));
      try { localStorage.setItem(KEY, on ? "on" : "off"); } catch (err) { /* kept for this page only */ }
      sync(button);
    });
    window.addEventListener("storage", event => {  // another tab of the book switched it
      if (event.key === KEY) { apply(event.newValue === "on"); sync(button); }
    });
    place.prepend(button);
  };
  const ready = () => { build(); reveal(); };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", ready);
  else ready();
})();
