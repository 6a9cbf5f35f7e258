// Switch the page to the dark theme and wait until it has applied.
async () => {
  document.documentElement.dataset.theme = "dark";
  document.documentElement.dataset.mode = "dark";
  await new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
  await Promise.all(document.getAnimations().map(a => a.finished.catch(() => null)));
}
