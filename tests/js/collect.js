// Everything the page checks need, read once the page has settled (tests/visits.py). "text" is every
// text node of the body outside code, scripts and typeset math: where raw TeX must not survive.
() => {
  const SKIP = new Set(["PRE", "CODE", "KBD", "SAMP", "SCRIPT", "STYLE", "TEXTAREA", "NOSCRIPT",
                        "TEMPLATE", "MJX-CONTAINER"]);
  const texts = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    let keep = true;
    for (let e = n.parentElement; e && keep; e = e.parentElement) keep = !SKIP.has(e.tagName);
    if (keep) texts.push(n.nodeValue);
  }
  const all = sel => Array.from(document.querySelectorAll(sel));
  const visible = e => e.checkVisibility({opacityProperty: true, visibilityProperty: true});
  return {
    text: texts.join(" "),
    math: all(".math").length,
    typeset: all("mjx-container").length,
    untypeset: all(".math").filter(e => !e.querySelector("mjx-container"))
                           .map(e => e.textContent.trim().slice(0, 120)),
    merrors: all("mjx-merror").map(e => e.getAttribute("data-mjx-error") || e.textContent),
    images: all("img").map(i => ({src: i.getAttribute("src"), alt: i.getAttribute("alt"),
                                  width: i.naturalWidth, complete: i.complete})),
    bare_figures: all("figure").filter(f => !f.querySelector("img, svg, object, canvas, video"))
                               .map(f => f.id || f.textContent.trim().slice(0, 80)),
    links: all("a[href]").map(a => ({href: a.href, raw: a.getAttribute("href")})),
    ids: all("[id]").map(e => e.id).concat(all("a[name]").map(a => a.name)),
    pasted: all(".pasted-text").map(e => ({text: e.textContent.trim(), visible: visible(e),
      folded: !!e.closest(".toggle-hidden, details:not([open]), .dropdown")})),
    marks: all(".pasted-text").map(e => {
      const mark = e.closest(".glued"), style = mark && getComputedStyle(mark);
      return {text: e.textContent.trim(), title: mark ? mark.getAttribute("title") : null,
              line: style ? style.textDecorationLine : "", dotted: style ? style.textDecorationStyle : "",
              weight: Number(getComputedStyle(e).fontWeight)};
    }),
    wide_code: all("main pre").filter(e => visible(e) && e.scrollWidth > e.clientWidth + 1)
                              .map(e => ({over: e.scrollWidth - e.clientWidth,
                                          line: e.textContent.split("\n").reduce(
                                            (a, b) => b.length > a.length ? b : a, "").slice(0, 100)})),
    downloads: all(".dropdown-download-buttons a[href]").map(a => a.href),
    download_menu: all(".dropdown-download-buttons > button.dropdown-toggle").map(b => ({
      label: b.getAttribute("aria-label"), text: b.textContent.trim(),
      items: [...b.parentElement.querySelectorAll(".dropdown-item")].map(i => i.textContent.trim())})),
    table_marks: all(".glued").filter(e => !e.querySelector(".pasted-text")).map(e => {
      const style = getComputedStyle(e);
      return {text: e.textContent.trim(), title: e.getAttribute("title"), line: style.textDecorationLine,
              dotted: style.textDecorationStyle, weight: Number(style.fontWeight),
              around: Number(getComputedStyle(e.parentElement).fontWeight)};  // a header cell is bold
    }),
    rendered: (document.querySelector("main") || document.body).innerText,
  };
}
