// Open every collapsed solution as a reader would (its toggle button), then report what each shows.
async () => {
  const solutions = Array.from(document.querySelectorAll(".solution"));
  for (const s of solutions) {
    const button = s.querySelector("button.toggle-button");
    if (button && s.classList.contains("toggle-hidden")) button.click();
  }
  await new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
  await Promise.all(document.getAnimations().map(a => a.finished.catch(() => null)));
  const visible = e => e.checkVisibility({opacityProperty: true, visibilityProperty: true});
  return solutions.map(s => {
    const body = Array.from(s.children).filter(c => !c.classList.contains("admonition-title"));
    return {id: s.id, open: !s.classList.contains("toggle-hidden"),
            body_visible: body.length > 0 && body.every(visible),
            math: s.querySelectorAll(".math").length,
            typeset: Array.from(s.querySelectorAll("mjx-container")).filter(visible).length,
            pasted_hidden: Array.from(s.querySelectorAll(".pasted-text")).filter(e => !visible(e))
                                .map(e => e.textContent),
            text: s.innerText};
  });
}
