// Keys 1 and 2 choose the canonical side of a pair (which drawer survives a merge, which entity
// takes the alias). Kept apart from review.js so the keyboard's other keys stay as they are.
(function () {
  "use strict";
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return;
    if (document.body.dataset.singleKeys === "off") return;  // shortcuts turned off (WCAG 2.1.4)
    if (document.querySelector("dialog[open]")) return;  // the ? dialog: keys never act behind it
    var t = event.target;
    if (t && t.tagName === "INPUT" && !/^(checkbox|radio|button|submit|reset)$/i.test(t.type)) return;
    if (t && (t.isContentEditable || /^(TEXTAREA|SELECT)$/.test(t.tagName))) return;
    if (event.key !== "1" && event.key !== "2") return;
    var radio = document.querySelector('.decide input[data-key-canonical="' + event.key + '"]');
    if (!radio) return;
    radio.checked = true;
    radio.dispatchEvent(new Event("change", { bubbles: true }));
    event.preventDefault();
  });
})();
