// ledger serve: the only script. It folds and unfolds tool calls, and opens
// the folded blocks of a message a link points at. The pages work without it.
"use strict";
document.addEventListener("click", function (ev) {
  var b = ev.target.closest("button[data-fold]");
  if (!b) return;
  var open = b.getAttribute("data-fold") === "open";
  document.querySelectorAll(".conversation details").forEach(function (d) { d.open = open; });
});
function openTarget() {
  if (!location.hash) return;
  var el = document.getElementById(location.hash.slice(1));
  if (el) el.querySelectorAll("details").forEach(function (d) { d.open = true; });
}
window.addEventListener("hashchange", openTarget);
document.addEventListener("DOMContentLoaded", openTarget);
