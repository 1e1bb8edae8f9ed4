// Used by scripts/docs_browser_check.py, which reads what this leaves in the DOM that a
// headless browser dumps.
//
// On every page, once it has loaded: how many images failed to load (#hm-image-check).
//
// Only when the page's address carries ?hm-check (so a reader's browser never does this
// work): the layout measurements (#hm-layout-check, JSON in its text), at the window's
// width, of
//   - every code block (pre) and table in the article, folded ones (<details>) opened: its
//     scroll width, its visible width, its right edge and the article's, so that a line cut
//     or a column past the text column shows;
//   - every SVG figure shown as <img>: the size at which each piece of its text renders.
//     The SVG is fetched and drawn, hidden, at the <img>'s rendered size, and each text's
//     font size is multiplied by the scale of its screen transform (the viewBox scale plus
//     every transform inside the figure).  A <text> element's font size is its computed
//     font-size; a text matplotlib drew as glyph paths (<use> of a glyph in <defs>, ids like
//     "DejaVuSans-76") is drawn at font size 100 (matplotlib's TextToPath.FONT_SCALE) and
//     scaled down by the transform matplotlib writes around it.
window.addEventListener("load", () => {
  const images = Array.from(document.images);
  const broken = images.filter((img) => !img.complete || img.naturalWidth === 0);
  const marker = document.createElement("div");
  marker.id = "hm-image-check";
  marker.hidden = true;
  marker.dataset.images = String(images.length);
  marker.dataset.broken = broken.map((img) => img.getAttribute("src")).join(" ");
  document.body.appendChild(marker);
  if (new URLSearchParams(window.location.search).has("hm-check")) {
    hmLayoutCheck().then(
      (result) => hmReport(result),
      (error) => hmReport({ error: String(error) }));
  }
});

const HM_GLYPH_FONT_SIZE = 100;  // matplotlib.textpath.TextToPath.FONT_SCALE

function hmReport(result) {
  const out = document.createElement("div");
  out.id = "hm-layout-check";
  out.hidden = true;
  out.textContent = JSON.stringify(result);
  document.body.appendChild(out);
}

function hmDescribe(el) {
  // A name a reader can find: the nearest section's id and the block's first line.
  const section = el.closest("section[id]");
  const first = (el.textContent || "").trim().split("\n")[0].slice(0, 60);
  return { section: section ? section.id : "", first };
}

function hmScale(m) {
  // The length scale of a 2-D transform (its determinant's square root).
  return Math.sqrt(Math.abs(m.a * m.d - m.b * m.c));
}

async function hmFigure(img) {
  const box = img.getBoundingClientRect();
  const figure = { src: img.getAttribute("src"), width: box.width, height: box.height,
                   texts: [] };
  if (box.width === 0) return figure;
  const response = await fetch(img.src);
  const doc = new DOMParser().parseFromString(await response.text(), "image/svg+xml");
  const svg = document.importNode(doc.documentElement, true);
  if (!svg.hasAttribute("viewBox")) {
    const w = parseFloat(svg.getAttribute("width")), h = parseFloat(svg.getAttribute("height"));
    svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
  }
  figure.viewBox = svg.getAttribute("viewBox");
  svg.setAttribute("width", String(box.width));
  svg.setAttribute("height", String(box.height));
  const holder = document.createElement("div");
  holder.style.cssText = "position:absolute;left:-100000px;top:0;overflow:hidden;" +
                         `width:${box.width}px;height:${box.height}px`;
  holder.appendChild(svg);
  document.body.appendChild(holder);
  const origin = holder.getBoundingClientRect();
  const glyphId = /^[A-Za-z][A-Za-z0-9]*(-[A-Za-z]+)*-[0-9a-f]+$/;
  const groups = new Map();  // one text matplotlib drew: the group around its glyphs
  for (const use of svg.querySelectorAll("use")) {
    const href = (use.getAttribute("href") || use.getAttribute("xlink:href") || "").slice(1);
    const target = href && svg.querySelector(`defs [id="${CSS.escape(href)}"]`);
    if (!target || !glyphId.test(href) || target.tagName !== "path") continue;
    const px = HM_GLYPH_FONT_SIZE * hmScale(use.getScreenCTM());
    const group = use.parentNode;
    const text = groups.get(group);
    if (!text || px < text.px) groups.set(group, { px, group });
  }
  for (const { px, group } of groups.values()) {
    let label = "";
    for (let n = group.previousSibling; n; n = n.previousSibling) {
      if (n.nodeType === Node.COMMENT_NODE) { label = n.textContent.trim(); break; }
      if (n.nodeType === Node.ELEMENT_NODE) break;
    }
    figure.texts.push({ label, px: Math.round(px * 100) / 100 });
  }
  for (const t of svg.querySelectorAll("text")) {
    const px = parseFloat(getComputedStyle(t).fontSize) * hmScale(t.getScreenCTM());
    figure.texts.push({ label: t.textContent.trim().slice(0, 60), px: Math.round(px * 100) / 100 });
  }
  figure.drawnAt = origin.width;
  holder.remove();
  return figure;
}

async function hmLayoutCheck() {
  const article = document.querySelector('article[role="main"]') || document.body;
  // A folded block (<details>, e.g. a diff) is measured as a reader who opens it sees it.
  for (const details of article.querySelectorAll("details")) details.open = true;
  const column = article.getBoundingClientRect();
  const page = document.documentElement;
  const result = { innerWidth: window.innerWidth, clientWidth: page.clientWidth,
                   scrollWidth: page.scrollWidth, column: { left: column.left, right: column.right },
                   boxes: [], blocks: [], figures: [] };
  // The page's own boxes (furo's navigation, text column and contents) must fit the window.
  for (const selector of [".sidebar-drawer", ".main", 'article[role="main"]', ".toc-drawer"]) {
    const el = document.querySelector(selector);
    if (el && el.getBoundingClientRect().width > 0) {
      result.boxes.push({ selector, right: el.getBoundingClientRect().right });
    }
  }
  for (const pre of article.querySelectorAll("pre")) {
    const r = pre.getBoundingClientRect();
    if (r.width === 0) continue;
    const lang = (pre.closest('div[class*="highlight-"]') || pre).className;
    result.blocks.push(Object.assign({ kind: "pre", lang, scrollWidth: pre.scrollWidth,
                                       clientWidth: pre.clientWidth, right: r.right },
                                     hmDescribe(pre)));
  }
  for (const table of article.querySelectorAll("table")) {
    if (table.closest("pre")) continue;
    const r = table.getBoundingClientRect();
    if (r.width === 0) continue;
    // The box that would scroll or clip it: furo wraps tables in div.table-wrapper.
    const box = table.closest(".table-wrapper") || table.parentElement;
    result.blocks.push(Object.assign({ kind: "table", lang: table.className,
                                       scrollWidth: box.scrollWidth, clientWidth: box.clientWidth,
                                       right: r.right }, hmDescribe(table)));
  }
  for (const img of article.querySelectorAll("img")) {
    if (/\.svg(\?|#|$)/i.test(img.getAttribute("src") || "")) {
      result.figures.push(await hmFigure(img));
    }
  }
  result.done = true;
  return result;
}
