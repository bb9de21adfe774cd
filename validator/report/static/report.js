// validator report: sort tables by a click on a header, filter the rows of tables marked "filterable".
// Loaded as a file (the pages' Content-Security-Policy forbids inline script); reads cells only
// through textContent and data attributes and never writes HTML.
"use strict";
(function () {
  function cellValue(row, column, numeric) {
    var cell = row.cells[column];
    if (!cell) { return numeric ? -Infinity : ""; }
    var raw = cell.hasAttribute("data-sort") ? cell.getAttribute("data-sort") : cell.textContent;
    if (numeric) {
      var value = parseFloat(raw);
      return isNaN(value) ? -Infinity : value;
    }
    return raw.trim().toLowerCase();
  }

  function sortTable(table, th) {
    var column = th.cellIndex;
    var numeric = th.getAttribute("data-type") === "number";
    var ascending = th.getAttribute("aria-sort") !== "ascending";
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.forEach(function (row, i) { row.originalIndex = i; });
    rows.sort(function (a, b) {
      var x = cellValue(a, column, numeric), y = cellValue(b, column, numeric);
      var order = x < y ? -1 : (x > y ? 1 : a.originalIndex - b.originalIndex);
      return ascending ? order : -order;
    });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (cell) { cell.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    rows.forEach(function (row) { body.appendChild(row); });
  }

  function applyFilters(table) {
    var textInput = document.querySelector('[data-filter-for="' + table.id + '"]');
    var reachedInput = document.querySelector('[data-reached-for="' + table.id + '"]');
    var needle = textInput ? textInput.value.trim().toLowerCase() : "";
    var reached = reachedInput ? reachedInput.value : "";
    var rows = table.tBodies[0].rows, shown = 0;
    for (var i = 0; i < rows.length; i++) {
      var row = rows[i];
      var ok = (!needle || row.textContent.toLowerCase().indexOf(needle) !== -1) &&
               (!reached || row.getAttribute("data-reached") === reached);
      row.hidden = !ok;
      shown += ok ? 1 : 0;
    }
    var count = document.querySelector('[data-count-for="' + table.id + '"]');
    if (count) { count.textContent = shown + " of " + rows.length + " shown"; }
  }

  function init() {
    document.querySelectorAll("table.sortable").forEach(function (table) {
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) {
        th.tabIndex = 0;
        th.addEventListener("click", function () { sortTable(table, th); });
        th.addEventListener("keydown", function (event) {
          if (event.key === "Enter" || event.key === " ") { event.preventDefault(); sortTable(table, th); }
        });
      });
    });
    document.querySelectorAll("table.filterable").forEach(function (table) {
      ["data-filter-for", "data-reached-for"].forEach(function (attr) {
        var input = document.querySelector("[" + attr + '="' + table.id + '"]');
        if (input) {
          input.addEventListener("input", function () { applyFilters(table); });
          input.addEventListener("change", function () { applyFilters(table); });
        }
      });
      applyFilters(table);
    });
    document.documentElement.setAttribute("data-report-ready", "1");
  }

  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", init); } else { init(); }
})();
