// The report's only script of its own (envdsl/report/site.py ships it with Mermaid).
// It sorts tables and asks Mermaid to draw the diagrams; it never reads spec text as markup.
"use strict";

// A click on a column header of a table.sortable sorts its rows by that column; a second
// click reverses. Cells sort by their data-sort value when they have one, numbers as numbers.
function sortKey(cell) {
  const text = cell.dataset.sort !== undefined ? cell.dataset.sort : cell.textContent.trim();
  const number = Number(text);
  return text !== "" && !Number.isNaN(number) ? number : text.toLowerCase();
}

function sortBy(header) {
  const table = header.closest("table");
  const column = Array.from(header.parentElement.children).indexOf(header);
  const ascending = header.dataset.order !== "ascending";
  table.querySelectorAll("th").forEach((th) => delete th.dataset.order);
  header.dataset.order = ascending ? "ascending" : "descending";
  const body = table.tBodies[0];
  const rows = Array.from(body.rows);
  rows.sort((a, b) => {
    const x = sortKey(a.cells[column]);
    const y = sortKey(b.cells[column]);
    const order = typeof x === typeof y ? (x < y ? -1 : x > y ? 1 : 0) : typeof x === "number" ? -1 : 1;
    return ascending ? order : -order;
  });
  rows.forEach((row) => body.appendChild(row));
}

// body[data-diagrams] says how drawing ended: none, rendered or failed (the browser test
// reads it, with the console, from the page's DOM). Each diagram is rendered on its own with
// an id of ours: mermaid.run() names its SVGs from the clock, and diagrams drawn within the
// same millisecond then share an id and overwrite one another.
async function drawDiagrams() {
  const nodes = Array.from(document.querySelectorAll("pre.mermaid"));
  if (nodes.length === 0) {
    document.body.dataset.diagrams = "none";
    return;
  }
  mermaid.initialize({
    startOnLoad: false,
    securityLevel: "strict",
    theme: "neutral",
    xyChart: { width: 520, height: 300 },
    // neutral greys out the plots: the first series blue, the second orange (the pass@k
    // charts' titles name these colours, envdsl/report/document.py)
    themeVariables: { xyChart: { plotColorPalette: "#1f5fbf, #d9480f, #2f9e44, #7048e8" } },
  });
  let failed = 0;
  for (const [index, node] of nodes.entries()) {
    try {
      const { svg } = await mermaid.render("diagram-" + index, node.textContent);
      node.innerHTML = svg; // Mermaid's output, sanitized by it (securityLevel strict)
      node.dataset.rendered = "yes";
    } catch (error) {
      failed += 1;
      console.error("diagram " + index + " failed to render: " + ((error && error.message) || error));
    }
  }
  document.body.dataset.diagrams = failed ? "failed" : "rendered";
}

document.addEventListener("DOMContentLoaded", () => {
  document.querySelectorAll("table.sortable th").forEach((header) => {
    header.addEventListener("click", () => sortBy(header));
  });
  drawDiagrams();
});
