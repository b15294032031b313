// The Back button (issue 13, defect 5). htmx restores a page from its own copy of the markup,
// and the browser may restore one from its back/forward cache; neither keeps what the curator
// had chosen in the filter form, so the form can disagree with the URL and its next change would
// drop the sort order. Here the form is set from the URL whenever a page is shown again. An item
// page that was open is fetched again: it may have been decided since.
(function () {
  "use strict";
  function syncFilters() {
    var params = new URLSearchParams(window.location.search);
    document.querySelectorAll("form.filters[hx-push-url]").forEach(function (form) {
      Array.prototype.forEach.call(form.elements, function (field) {
        if (!field.name) return;
        if (field.type === "checkbox" || field.type === "radio") {
          field.checked = params.getAll(field.name).indexOf(field.value) !== -1;
        } else if (field.tagName === "SELECT") {
          field.value = params.get(field.name) || "";
          if (field.selectedIndex === -1) field.selectedIndex = 0;  // the server's default
        } else if (field.type !== "submit" && field.type !== "button") {
          field.value = params.get(field.name) || "";
        }
      });
    });
  }
  document.addEventListener("htmx:historyRestore", syncFilters);
  window.addEventListener("pageshow", function (event) {
    if (event.persisted && document.querySelector("form.decide")) {
      window.location.reload();
      return;
    }
    syncFilters();
  });
})();
