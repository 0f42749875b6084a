/* An answer's behaviours that stay in the browser: citation links open their entry, and the copy
   link. Feedback ("useful", a reported problem, "this source does not say this") and "I understand"
   are htmx requests answered by server-rendered fragments (research/_feedback_box.html,
   _citation_report.html, _acknowledge.html): the server decides what is valid and says so. */
(function () {
  "use strict";
  var U = window.Uedu;

  function openCitation(hash) {
    if (!/^#cite-[0-9a-f]+-\d+$/.test(hash || "")) return;
    var details = document.querySelector(hash + " details");
    if (details) details.open = true;
  }

  document.addEventListener("click", function (event) {
    var target = event.target.closest("a[href^='#cite-'], [data-action='copy-link']");
    if (!target) return;
    if (target.hasAttribute("href")) return openCitation(target.getAttribute("href")); // before the browser scrolls to it
    var status = document.querySelector('[data-role="copy-status"]');
    var show = function (key) { if (status) status.textContent = U.t(key); };
    navigator.clipboard.writeText(target.getAttribute("data-url")).then(function () { show("copied"); }, function () { show("copy_failed"); });
  });

  // The copy button needs the Clipboard API; without it the link field stays the way to copy.
  if (navigator.clipboard) document.querySelectorAll("[data-action='copy-link']").forEach(function (button) { button.hidden = false; });
  // A link from elsewhere (the feedback page, a shared "#cite-…" address) opens the cited entry.
  openCitation(window.location.hash);
})();
