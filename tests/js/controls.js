// Every control of the explorable under the selector `root` that a keyboard can reach, with its label
// (tests/test_explorables.py).
root => [...document.querySelector(root).querySelectorAll(
    'input, button, [tabindex]')].filter(e => !e.disabled).map(e => ({
      tag: e.tagName, tabindex: e.tabIndex,
      label: e.getAttribute('aria-label') || (e.id && document.querySelector(`label[for="${e.id}"]`)
             ? document.querySelector(`label[for="${e.id}"]`).textContent : '') || e.textContent.trim()}))
