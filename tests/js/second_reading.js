// What a first reading leaves of the second-reading material (tests/test_first_reading.py): for each
// given phrase, whether a paragraph or a code cell that starts with (or, for cells, holds) it is on
// the page and drawn; and the drawn paragraphs that start with "A reader calls it as".
phrases => {
  const drawn = e => e.getClientRects().length > 0;
  const blocks = [...document.querySelectorAll("main article p, main article div.cell")];
  const text = e => e.textContent.replace(/\s+/g, " ").trim();
  const found = {};
  for (const phrase of phrases) {
    const hits = blocks.filter(e => e.matches("p") ? text(e).startsWith(phrase) : text(e).includes(phrase));
    found[phrase] = !hits.length ? null : hits.every(drawn) ? true : hits.some(drawn) ? "some" : false;
  }
  const calls = [...document.querySelectorAll("main article p")]
    .filter(e => drawn(e) && text(e).startsWith("A reader calls it as")).map(text);
  return {found, calls};
}
