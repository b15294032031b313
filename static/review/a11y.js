// Accessibility of in-place loads (issue 13, capability 14). When htmx swaps an item into #main
// (the next item after a decision), a screen reader and a keyboard user would otherwise be left
// on nothing: focus moves to the item's heading, the page title names the item, and the live
// region (#announcer, outside #main so it survives the swap) says what was done and what loaded.
(function () {
  "use strict";
  function announce(text) {
    var region = document.getElementById("announcer");
    if (!region) return;
    region.textContent = "";
    // A change after a tick is announced even when the text repeats.
    window.setTimeout(function () { region.textContent = text; }, 50);
  }
  document.addEventListener("htmx:afterSettle", function (event) {
    var main = document.getElementById("main");
    if (!main || event.detail.target !== main) return;
    var item = main.querySelector("[data-item]");
    var heading = main.querySelector("h1");
    if (!item || !heading) return;
    var id = item.getAttribute("data-item");
    document.title = "Item " + id + " · Castellan";
    heading.setAttribute("tabindex", "-1");
    heading.focus({ preventScroll: false });
    var said = Array.prototype.map.call(
      main.querySelectorAll(".messages li, [role=alert]"),
      function (el) { return el.textContent.trim(); }
    );
    said.push("Item " + id + " loaded: " + heading.textContent.replace(/\s+/g, " ").trim() + ".");
    announce(said.join(" "));
  });
})();
