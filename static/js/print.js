/* The result page's "Print / Save as PDF" button: the browser's print dialog (where "Save as PDF"
   is one of the printers). What the paper shows is static/css/print.css's business; the button
   stays hidden without this script, since it could do nothing. */
(function () {
  "use strict";
  document.querySelectorAll("[data-action='print']").forEach(function (button) {
    button.hidden = false;
    button.addEventListener("click", function () { window.print(); });
  });
})();
