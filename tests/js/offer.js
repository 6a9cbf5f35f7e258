// The first-visit offer of a first reading (tests/test_first_reading.py; book/_ext/static/first_reading.js):
// is it shown, where, how it is announced (its tag, role, name, live region), its buttons' names, the
// contrast of its text, of each button's text and of each button's outline in the page's theme, and
// whether it (or anything) reaches past the viewport; also whether the summary still follows the title.
() => {
  @include colour.js
  const offers = document.querySelectorAll(".first-reading-offer");
  const o = offers[0];
  const article = document.querySelector("main article");
  const shown = !!o && getComputedStyle(o).display !== "none" && o.checkVisibility();
  const rect = e => { const r = e.getBoundingClientRect();
    return {left: r.left, right: r.right, top: r.top, bottom: r.bottom, width: r.width, height: r.height}; };
  const buttons = o ? [...o.querySelectorAll("button")] : [];
  const h1 = document.querySelector("main article h1");
  const summary = document.querySelector("main .chapter-summary");
  return {
    offers: offers.length, shown, theme: document.documentElement.dataset.theme,
    tag: o ? o.tagName : null, role: o ? o.getAttribute("role") : null, label: o ? o.getAttribute("aria-label") : null,
    live: o ? [o, ...o.querySelectorAll("*")].some(e => e.hasAttribute("aria-live") || e.getAttribute("role") === "alert"
                                                   || e.getAttribute("role") === "status") : null,
    first_in_article: !!o && !!article && article.firstElementChild === o,
    text: o ? o.querySelector("p").textContent : null,
    buttons: buttons.map(b => ({name: b.textContent.trim(), type: b.type,
      text: ratio(getComputedStyle(b).color, behind(b)),
      border: ratio(getComputedStyle(b).borderTopColor, behind(b.parentElement))})),
    text_contrast: o ? ratio(getComputedStyle(o.querySelector("p")).color, behind(o)) : null,
    box: o ? rect(o) : null, article: article ? rect(article) : null,
    viewport: document.documentElement.clientWidth,
    page_wider: document.documentElement.scrollWidth > document.documentElement.clientWidth + 1,
    summary_follows_title: !summary || (!!h1 && h1.nextElementSibling === summary),
    focused: document.activeElement ? (document.activeElement.className || document.activeElement.tagName).toString() : null,
  };
}
