// The "First reading" switch (book/_ext/first_reading.py). On, the page hides, on screen only, what a
// first reading skips: proofs, class badges, the "How this page is checked" block, the technical
// asides, the kernel code under a formula and what is marked second-reading (first_reading.css). The choice is kept in localStorage, so every page opens as the reader
// left the last one; this file runs in the head, so the state applies before the body is drawn.
// A reader who has never chosen (no key stored) finds, at the top of the article, a quiet offer with
// two buttons; either choice is stored like the switch's, applied, shown on the switch, and the
// offer goes for good. The switch is off until the reader turns it on: all is shown by default.
(() => {
  const KEY = "first-reading";
  const root = document.documentElement;
  const stored = () => {
    try { return localStorage.getItem(KEY) === "on"; } catch (err) { return false; }
  };
  const apply = on => root.classList.toggle("first-reading", on);
  apply(stored());

  // A link into something a first reading hides (a technical aside, a proof, a theorem marked
  // second-reading) opens the boxes that hide its target, and only those, and brings the target into
  // view. The box must open before the browser scrolls: a browser does not scroll to a target that is
  // not displayed, and following a link to the hash already in the address fires no hashchange. So a
  // click on such a link opens the box first, and the browser's own scroll then finds the target;
  // a page opened at such a hash (from another page, or back and forward) opens it and scrolls to it.
  const HIDDEN = ".prf-proof, .kernel-code, details.how-checked, .admonition.technical, .second-reading, .tag_second-reading";
  const targetOf = hash => {
    if (!hash || hash.length < 2) return null;
    try { return document.getElementById(decodeURIComponent(hash.slice(1))); } catch (err) { return null; }
  };
  const open = target => {  // true when the target is in something a first reading hides
    if (!target || !root.classList.contains("first-reading") || !target.closest(HIDDEN)) return false;
    for (let box = target.closest(HIDDEN); box; box = box.parentElement && box.parentElement.closest(HIDDEN)) {
      box.classList.add("opened-by-link");
      if (box.tagName === "DETAILS") box.open = true;
    }
    return true;
  };
  const reveal = () => {
    const target = targetOf(location.hash);
    if (open(target)) target.scrollIntoView();
  };
  window.addEventListener("hashchange", reveal);
  document.addEventListener("click", event => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    const link = event.target instanceof Element && event.target.closest("a[href]");
    if (!link || link.origin !== location.origin || link.pathname !== location.pathname || link.search !== location.search) return;
    open(targetOf(link.hash));  // before the browser follows the link, which then scrolls to a displayed target
  }, true);

  const sync = button => button.setAttribute("aria-pressed", String(root.classList.contains("first-reading")));
  const syncAll = () => document.querySelectorAll(".first-reading-switch").forEach(sync);
  const store = on => {
    try { localStorage.setItem(KEY, on ? "on" : "off"); } catch (err) { /* kept for this page only */ }
  };
  const chosen = () => {  // unreadable storage counts as chosen: an offer it cannot remember would come back on every page
    try { return localStorage.getItem(KEY) !== null; } catch (err) { return true; }
  };
  const dropOffer = () => document.querySelectorAll(".first-reading-offer").forEach(offer => offer.remove());

  // The first-visit offer: a labelled aside (a landmark, not an alert: nothing is announced), first in the article.
  const offer = () => {
    const article = document.querySelector("main article.bd-article") || document.querySelector("main article");
    if (chosen() || !article || article.querySelector(".first-reading-offer")) return;
    const box = document.createElement("aside");
    box.className = "first-reading-offer";
    box.setAttribute("aria-label", "A first reading");
    const text = document.createElement("p");
    text.textContent = "New to attention? A first reading hides proofs, badges, checks and technical asides.";
    const choices = document.createElement("div");
    choices.className = "first-reading-offer-choices";
    for (const [label, on] of [["Start the first reading", true], ["Show everything", false]]) {
      const button = document.createElement("button");
      button.type = "button";
      button.className = "btn btn-sm first-reading-offer-" + (on ? "start" : "all");
      button.textContent = label;
      button.addEventListener("click", () => {
        apply(on);
        store(on);
        syncAll();
        dropOffer();
        const header = document.querySelector(".first-reading-switch");  // focus goes to the switch, which now shows the choice
        if (header) header.focus();
      });
      choices.append(button);
    }
    box.append(text, choices);
    article.prepend(box);
  };

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
      store(on);
      sync(button);
      dropOffer();  // the reader has chosen
    });
    window.addEventListener("storage", event => {  // another tab of the book switched it
      if (event.key === KEY) { apply(event.newValue === "on"); sync(button); if (event.newValue !== null) dropOffer(); }
    });
    place.prepend(button);
  };
  const ready = () => { build(); offer(); reveal(); };
  window.addEventListener("load", reveal);  // once the page is laid out: opened boxes stay opened, the scroll is redone
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", ready);
  else ready();
})();
