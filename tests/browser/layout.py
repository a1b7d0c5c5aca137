"""What the layout tests measure in the browser: elements wider than their box, and the text of
rendered Plotly charts overlapping or leaving its chart.

An element marked as a scroll container (class ``table-scroll``, the attribute
``data-scroll-container``, the admin's list of rows) may hold content wider than itself: a person scrolls it sideways on
purpose. Everything else, the document included, must fit: ``scrollWidth <= clientWidth``
(a pixel of rounding allowed), which also catches content cut off by ``overflow: hidden``.
Form fields scroll their own text and are left out.
"""

SCROLL_CONTAINERS = (
    ".table-scroll, [data-scroll-container], #changelist .results,"
    " #content-main > .module:has(> #change-history)"
)
"""The admin's list of rows (``#changelist .results``) scrolls sideways by the admin's own
styles, and a record's change history by ``static/css/admin.css``, like the site's tables in
``.table-scroll``."""

WIDTHS = (1440, 1280, 390)
"""The widths every page is checked at: a wide desktop, a laptop, a phone."""

FITTED = """() => Array.from(document.querySelectorAll("[data-figure]")).every(el =>
  !el.getClientRects().length
  || (el.dataset.settled && Math.abs(el.clientWidth - Number(el.dataset.fittedWidth)) <= 4))"""
"""JavaScript: every chart on the page drawn and fitted to the width it has now
(``static/js/charts.js`` marks each ``data-settled``, with the width it fitted)."""

OVERFLOWS = """() => {
  const problems = [];
  const doc = document.documentElement;
  if (doc.scrollWidth > doc.clientWidth + 1) {
    problems.push(`the document: ${doc.scrollWidth} px of content in ${doc.clientWidth} px`);
  }
  const describe = el => {
    let text = el.tagName.toLowerCase();
    if (el.id) text += "#" + el.id;
    if (el.classList.length) text += "." + Array.from(el.classList).join(".");
    const words = (el.textContent || "").trim().replace(/\\s+/g, " ").slice(0, 60);
    return words ? `${text} (“${words}”)` : text;
  };
  for (const el of document.body.querySelectorAll("*")) {
    if (el instanceof SVGElement) continue;  // a chart's drawing: its text is checked apart
    if (el.closest(".js-plotly-plot .svg-container")) continue;
    if (el.matches("input, textarea, select, option, script, style, template")) continue;
    if (el.matches(%(scroll)s)) continue;
    if (el.closest(".visually-hidden")) continue;  // for screen readers: clipped on purpose
    // a button drawn as an icon, its words pushed out of sight for screen readers (the admin's)
    if (parseFloat(getComputedStyle(el).textIndent) < -100) continue;
    if (!el.getClientRects().length) continue;  // not rendered
    if (el.scrollWidth > el.clientWidth + 1 && el.clientWidth > 0) {
      problems.push(`${describe(el)}: ${el.scrollWidth} px of content in ${el.clientWidth} px`);
    }
  }
  return problems;
}""".replace("%(scroll)s", repr(SCROLL_CONTAINERS))
"""JavaScript: every element (and the document) whose content is wider than its box, in words."""

PLOT_TEXT = """() => {
  const problems = [];
  const visible = el => {
    const style = getComputedStyle(el);
    return style.visibility !== "hidden" && style.display !== "none" && style.opacity !== "0"
      && parseFloat(el.getAttribute("opacity") ?? "1") > 0;
  };
  document.querySelectorAll(".js-plotly-plot").forEach((plot, index) => {
    const name = plot.id || `chart ${index + 1}`;
    const box = plot.getBoundingClientRect();
    const texts = [];
    plot.querySelectorAll("svg text").forEach(el => {
      const words = (el.textContent || "").trim();
      if (!words || !visible(el)) return;
      if (el.closest(".hoverlayer")) return;  // the tooltip: only while hovering
      const rect = el.getBoundingClientRect();
      const legend = el.closest(".legend");
      if (legend && legend.querySelector(".scrollbar")) {
        // a legend longer than its room scrolls: what lies outside its box is scrolled away
        const room = (legend.querySelector(".bg") || legend).getBoundingClientRect();
        if (rect.bottom > room.bottom + 1 || rect.top < room.top - 1) return;
      }
      if (rect.width < 0.5 || rect.height < 0.5) return;
      texts.push({words, rect});
    });
    const inside = (r) => r.left >= box.left - 1 && r.right <= box.right + 1
      && r.top >= box.top - 1 && r.bottom <= box.bottom + 1;
    texts.forEach(t => {
      if (!inside(t.rect)) {
        problems.push(`${name}: “${t.words}” leaves the chart's box`);
      }
    });
    // no two labels of one axis read the same (two options cut to "H100 SXM5 80GB on…")
    const ticks = {};
    plot.querySelectorAll("g[class$='tick'] > text").forEach(el => {
      const words = (el.textContent || "").trim();
      if (!words || !visible(el)) return;
      const axis = el.parentNode.getAttribute("class");
      const seen = ticks[axis] || (ticks[axis] = new Set());
      if (seen.has(words)) problems.push(`${name}: two labels of one axis read “${words}”`);
      seen.add(words);
    });
    // the toolbar (Plotly's modebar), shown on hover or a tap, covers no text of the chart
    const bar = plot.querySelector(".modebar");
    const barBox = bar && bar.getBoundingClientRect();
    if (barBox && barBox.width > 0 && barBox.height > 0) {
      texts.forEach(t => {
        const dx = Math.min(barBox.right, t.rect.right) - Math.max(barBox.left, t.rect.left);
        const dy = Math.min(barBox.bottom, t.rect.bottom) - Math.max(barBox.top, t.rect.top);
        if (dx > 1 && dy > 1) problems.push(`${name}: the toolbar covers “${t.words}”`);
      });
    }
    for (let i = 0; i < texts.length; i++) {
      for (let j = i + 1; j < texts.length; j++) {
        const a = texts[i].rect, b = texts[j].rect;
        const dx = Math.min(a.right, b.right) - Math.max(a.left, b.left);
        const dy = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
        if (dx > 1 && dy > 1) {
          problems.push(`${name}: “${texts[i].words}” overlaps “${texts[j].words}”`);
        }
      }
    }
  });
  return problems;
}"""
"""JavaScript: the text boxes of every rendered Plotly chart that overlap another, leave the
chart's box or lie under its toolbar, in words."""

EXPONENTS = r"""() => {
  const shown = [document.body.innerText];
  document.querySelectorAll("svg text").forEach(el => shown.push(el.textContent || ""));
  document.querySelectorAll("input").forEach(el => shown.push(el.value || ""));
  const found = [];
  const pattern = /(?<![\w.-])\d+(?:\.\d+)?e[+-]\d+(?!\w)/gi;
  shown.forEach(text => {
    for (const match of text.matchAll(pattern)) {
      const around = text.slice(Math.max(0, match.index - 40), match.index + match[0].length + 20);
      found.push(`a number in exponent form: “${around.replace(/\s+/g, " ").trim()}”`);
    }
  });
  return found;
}"""
"""JavaScript: every number the page shows (its text, its charts' text, its fields' values)
written in exponent form ("4.2e+20"), in words."""

FIRST_SCREEN = 844
"""A phone's first screen at 390 px wide [px] (an iPhone 14's 390 × 844)."""

KEY_FIGURES = "#answer-sentence, #key-figures tbody tr:first-child td[data-label='NPV']"
"""Where a page's key figures end: an answer's sentence (Ask's page, a question's read-only
link), else the first option's NPV in a run's key figures (its page, its read-only link)."""

KEY_FIGURES_PAGES = ("run", "shared-run", "answer")
"""The kinds of page (URL names) that show key figures, on a phone's first screen."""

KEY_FIGURES_END = """selector => {
  const el = document.querySelector(selector);
  return el ? el.getBoundingClientRect().bottom + window.scrollY : null;
}"""
"""JavaScript: how far down the page the first element ``selector`` finds ends [px]."""
