// Accessibility of in-place loads (issue 13, capability 14). When htmx swaps an item into #main
// (the next item after a decision), a screen reader and a keyboard user would otherwise be left
// on nothing: focus moves to the item's heading (described by the flash message), the page title
// names the item, and the live region (#announcer, outside #main so it survives the swap) says
// which item loaded.
(function () {
  "use strict";
  function announce(text) {
    var region = document.getElementById("announcer");
    if (!region) return;
    region.textContent = "";
    // A change after a tick is announced even when the text repeats.
    window.setTimeout(function () { region.textContent = text; }, 50);
  }
  // "Next page" in the queue and "Older entries" in the audit log ([data-focus-new]) replace the
  // link that had focus, which would drop to <body>: focus moves to the first row that came in.
  var incoming = null;
  document.addEventListener("htmx:beforeRequest", function (event) {
    var elt = event.detail.elt;
    incoming = null;
    if (!elt || !elt.hasAttribute || !elt.hasAttribute("data-focus-new")) return;
    var row = elt.closest("tr");
    incoming = row
      ? { after: row.previousElementSibling, body: row.parentElement }
      : { container: document.querySelector(elt.getAttribute("hx-target")) };
  });
  document.addEventListener("htmx:afterSettle", function () {
    var plan = incoming;
    incoming = null;
    if (!plan) return;
    var first = plan.container
      ? plan.container.querySelector("tr.row")
      : (plan.after ? plan.after.nextElementSibling : plan.body.firstElementChild);
    if (!first) return;
    if (first.classList.contains("row")) {
      document.querySelectorAll("tr.row.selected").forEach(function (r) { r.classList.remove("selected"); });
      first.classList.add("selected");  // j/k and Enter go on from it
    }
    var target = first.querySelector("a[href]") || first;
    if (target === first) first.setAttribute("tabindex", "-1");
    target.focus();
  });
  document.addEventListener("htmx:afterSettle", function (event) {
    var main = document.getElementById("main");
    if (!main || event.detail.target !== main) return;
    var item = main.querySelector("[data-item]");
    var heading = main.querySelector("h1");
    if (!item || !heading) return;
    var id = item.getAttribute("data-item");
    document.title = "Item " + id + " · Castellan";
    // The flash message ("Done: merge on d3") describes the focused heading, so it is read with
    // it; the live region says only what loaded, so the page never holds the message twice.
    var flash = main.querySelector(".messages");
    if (flash) {
      flash.id = flash.id || "flash";
      heading.setAttribute("aria-describedby", flash.id);
    }
    heading.setAttribute("tabindex", "-1");
    heading.focus();
    announce("Loaded item " + id + ".");
  });
})();
// After an action that loads a whole page (an undo, a revert, a judged sample card, a sweep's
// Apply asked), focus was left on <body> and its message went unread until found: focus moves
// to the message the page opens with, so a screen reader reads it and Tab goes on from there.
// Not where the address names a place (#to-judge: the browser goes there) nor into a field.
(function () {
  "use strict";
  function focusMessage() {
    if (window.location.hash) return;
    var active = document.activeElement;
    if (active && active !== document.body) return;
    var flash = document.querySelector("#main .messages");
    if (!flash) return;
    flash.setAttribute("tabindex", "-1");
    flash.focus({ preventScroll: true });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", focusMessage);
  else focusMessage();
})();
