// Is the static figure (or the trace table) just before the explorable under `root` shown?
// (tests/test_explorables.py reads it with the page printed.)
root => {
  let e = document.querySelector(root).previousElementSibling;
  while (e && !(e.querySelector && e.querySelector("figure img, img, table"))) e = e.previousElementSibling;
  return e ? getComputedStyle(e).display !== "none" : false;
}
