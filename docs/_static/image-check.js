// Used by scripts/docs_browser_check.py: once the page has loaded, record how many images
// failed to load in a hidden element that a headless browser's DOM dump shows.
window.addEventListener("load", () => {
  const images = Array.from(document.images);
  const broken = images.filter((img) => !img.complete || img.naturalWidth === 0);
  const marker = document.createElement("div");
  marker.id = "hm-image-check";
  marker.hidden = true;
  marker.dataset.images = String(images.length);
  marker.dataset.broken = broken.map((img) => img.getAttribute("src")).join(" ");
  document.body.appendChild(marker);
});
