// Keyboard for the review console. Everything also works with plain links and forms.
(function () {
  "use strict";
  // A field that takes text (single-key shortcuts never fire there); a checkbox, radio or button
  // takes no letters, so the keys still work after one is clicked.
  function typing(event) {
    var t = event.target;
    if (!t) return false;
    if (t.tagName === "INPUT") return !/^(checkbox|radio|button|submit|reset)$/i.test(t.type);
    return t.isContentEditable || /^(TEXTAREA|SELECT)$/.test(t.tagName);
  }
  function rows() { return Array.prototype.slice.call(document.querySelectorAll("tr.row")); }
  function select(row) {
    rows().forEach(function (r) { r.classList.remove("selected"); });
    row.classList.add("selected");
  }
  function move(step) {
    var list = rows();
    if (!list.length) return false;
    var at = list.findIndex(function (r) { return r.classList.contains("selected"); });
    var next = list[Math.min(list.length - 1, Math.max(0, at + step))];
    select(next);
    var link = next.querySelector("a");
    if (link) link.focus();
    return true;
  }
  function click(selector) {
    var el = document.querySelector(selector);
    if (el) { el.click(); return true; }
    return false;
  }
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || typing(event)) return;
    // While a dialog (the ? keys) is open, keys only move within it and close it (Escape): a
    // key must never decide the item behind the modal.
    if (document.querySelector("dialog[open]")) return;
    // Single-key shortcuts turned off by the user (WCAG 2.1.4): no letter or symbol key acts.
    if (document.body.dataset.singleKeys === "off" && event.key.length === 1) return;
    var key = event.key, done = false;
    if (key === "?") {
      var dialog = document.getElementById("keys");
      if (dialog && !dialog.open) { dialog.showModal(); done = true; }
    } else if (key === "j" || key === "k") {
      if (!move(key === "j" ? 1 : -1)) {
        // On an item page: j opens the next item (the first open one), k the queue it is in
        // (its filter kept). Not the browser's Back, which could leave the console or undo a
        // filter unseen; pages with neither link (audit, stats, sweeps) do nothing.
        if (key === "j") done = click("[data-key-next]") || click("a[data-key-prev]");
        else done = click("a[data-key-prev]");
      } else done = true;
    } else if (key === "Enter" && document.querySelector("tr.row.selected") && !event.target.closest("a,button")) {
      window.location = document.querySelector("tr.row.selected").dataset.href; done = true;
    } else if ("amdx".indexOf(key) !== -1 && key.length === 1) {
      done = click('.decide button[data-key="' + key + '"]');
    } else if (key === "u") {
      var undo = document.getElementById("undo-form");
      if (undo) { undo.submit(); done = true; }
    }
    if (done) event.preventDefault();
  });
  // A click in a queue row (its checkbox, say) selects that row, so Enter opens the row the
  // curator is at, not one selected earlier with j/k.
  document.addEventListener("click", function (event) {
    var row = event.target.closest && event.target.closest("tr.row");
    if (row) select(row);
  });
  // The header's shortcuts toggle is outside #main: after an in-place load its `next` is still
  // the page first loaded. It returns to the page the curator is on now.
  document.addEventListener("submit", function (event) {
    var next = event.target.matches("form.shortcuts") && event.target.querySelector('[name="next"]');
    if (next) next.value = window.location.pathname + window.location.search;
  });
  // A refused decision (409 already decided, 403) still shows its message in place.
  document.addEventListener("htmx:beforeSwap", function (event) {
    var status = event.detail.xhr.status;
    if (status === 409 || status === 403 || status === 400) {
      event.detail.shouldSwap = true;
      event.detail.isError = false;
    }
  });
})();
