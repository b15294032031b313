// A plain form (a full page load, no htmx) is submitted once: a second click or Enter before the
// next page arrives would start a second sweep, store a second application, revert twice. Its
// submit buttons are disabled after the submit (not during it: a disabled button's name and
// value would be left out of the form data), and a second submit is dropped. A page restored by
// Back from the browser's cache gets its buttons back.
(function () {
  "use strict";
  function plain(form) {
    return (form.getAttribute("method") || "").toLowerCase() === "post" &&
      !form.hasAttribute("hx-post") && !form.hasAttribute("hx-get");
  }
  function buttons(form) {
    return form.querySelectorAll('button:not([type="button"]):not([type="reset"]), input[type="submit"]');
  }
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!plain(form)) return;
    if (form.dataset.submitted) { event.preventDefault(); return; }
    form.dataset.submitted = "1";
    window.setTimeout(function () {
      buttons(form).forEach(function (button) {
        if (button.disabled) return;  // e.g. the hidden guard against implicit submission
        button.disabled = true;
        button.dataset.submitOnce = "1";
      });
    }, 0);
  });
  window.addEventListener("pageshow", function (event) {
    if (!event.persisted) return;
    document.querySelectorAll("form[data-submitted]").forEach(function (form) {
      delete form.dataset.submitted;
      form.querySelectorAll("[data-submit-once]").forEach(function (button) {
        button.disabled = false;
        delete button.dataset.submitOnce;
      });
    });
  });
})();
// The same for a form sent by htmx that opts in with data-submit-once (a cluster's decision): a
// second submit before the page changes is cancelled, also in the moment between a response
// that redirects (HX-Redirect) and the next page. A response swapped in place (a refusal) brings
// a fresh form; an error with no swap lets the form be sent again.
(function () {
  "use strict";
  function once(event) {
    var elt = event.detail.elt;
    return elt && elt.matches && elt.matches("form[data-submit-once]") ? elt : null;
  }
  document.addEventListener("htmx:beforeRequest", function (event) {
    var form = once(event);
    if (!form) return;
    if (form.dataset.submitted) { event.preventDefault(); return; }
    form.dataset.submitted = "1";
  });
  document.addEventListener("htmx:afterRequest", function (event) {
    var form = once(event);
    var xhr = event.detail.xhr;
    if (form && !(xhr && xhr.getResponseHeader("HX-Redirect"))) delete form.dataset.submitted;
  });
})();
