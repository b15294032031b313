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
    } else if ("amdxu".indexOf(key) !== -1 && key.length === 1 && event.repeat) {
      // A held key repeats: it decided (or undid) once on its first press, never again.
      done = true;
    } else if ("amdx".indexOf(key) !== -1 && key.length === 1) {
      done = click('.decide button[data-key="' + key + '"]');
    } else if (key === "u") {
      // Only the Undo offered on this page, naming its decision, and through its submit event,
      // so submit_once.js drops a second `u` before the next page arrives. No offer: nothing.
      var undo = document.querySelector("form.undo-offer");
      if (undo) { undo.requestSubmit(); done = true; }
    }
    if (done) event.preventDefault();
  });
  // A decision never lands on an item the curator has not seen. A quick second press (or a
  // double click) reaches the next item, swapped in place of the first ~50 ms later, before
  // anyone could read it. So a decision form submits nothing while a decision is on its way, nor
  // for QUIET_MS after an item is swapped in: 450 ms is longer than a double press or a double
  // click (under ~300 ms) and shorter than reading an item takes, so deliberate work is not
  // slowed. Checked at the submit event, in the capture phase before htmx sees it, so keys,
  // clicks and Enter are all covered; held keys are dropped above (event.repeat).
  // busyUntil: a decision is on its way. Ended by the swap it brings or by its request's end
  // (an error), and at worst after 15 s: an event on a form swapped out may never reach here.
  var QUIET_MS = 450, quietUntil = 0, busyUntil = 0;
  function decideForm(event) { return event.detail.elt && event.detail.elt.matches && event.detail.elt.matches("form.decide"); }
  document.addEventListener("submit", function (event) {
    if (!event.target.matches("form.decide")) return;
    var now = performance.now();
    if (now < busyUntil || now < quietUntil) {
      event.preventDefault();
      event.stopImmediatePropagation();
    }
  }, true);
  document.addEventListener("htmx:beforeRequest", function (event) {
    if (decideForm(event)) busyUntil = performance.now() + 15000;
  });
  ["htmx:afterRequest", "htmx:sendError", "htmx:timeout"].forEach(function (name) {
    document.addEventListener(name, function (event) { if (decideForm(event)) busyUntil = 0; });
  });
  document.addEventListener("htmx:afterSwap", function (event) {
    if (!event.detail.target || event.detail.target.id !== "main") return;
    busyUntil = 0;
    quietUntil = performance.now() + QUIET_MS;
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
  // A refused decision (400, 403, 409 already decided) or an item gone meanwhile (404, 410)
  // shows the server's message in place. A whole page (Django's own 404 page, with the header
  // and menu) is not swapped into the page: it is said as the other failures are, below.
  var WHOLE_PAGE = /^\s*<!doctype|<html[\s>]/i;
  document.addEventListener("htmx:beforeSwap", function (event) {
    var status = event.detail.xhr.status;
    if ([400, 403, 404, 409, 410].indexOf(status) === -1) return;
    if (WHOLE_PAGE.test(event.detail.xhr.responseText || "")) {
      event.detail.shouldSwap = false;
      failed("That is not there (" + status + ").");
      return;
    }
    event.detail.shouldSwap = true;
    event.detail.isError = false;
  });
  // Anything else that fails (a server error, a busy database, no network) would leave the page
  // as it was, buttons live, saying nothing: #request-error says so, as an alert, until the
  // next request. A server error may come after the work was saved, so it asks for a reload.
  function failed(text) {
    var box = document.getElementById("request-error");
    if (!box) return;
    box.textContent = text + " Reload the page to see whether it was done, then try again.";
    box.hidden = false;
  }
  document.addEventListener("htmx:beforeRequest", function () {
    var box = document.getElementById("request-error");
    if (box) box.hidden = true;
  });
  document.addEventListener("htmx:responseError", function (event) {
    var status = event.detail.xhr.status;
    if (status >= 500) failed(status === 503 ? "The server is busy (503)." : "The server failed (" + status + ").");
  });
  ["htmx:sendError", "htmx:timeout"].forEach(function (name) {
    document.addEventListener(name, function () { failed("The server could not be reached."); });
  });
})();
