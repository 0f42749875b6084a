/* An answer's small behaviours: citation links open their entry, "I understand", copy link, and
   feedback (useful / not useful, a reported problem, "this source does not say this"), each sent
   to the API, which decides what is valid. The state already given is rendered by the server. */
(function () {
  "use strict";
  var U = window.Uedu;

  function openCitation(hash) {
    if (!/^#cite-[0-9a-f]+-\d+$/.test(hash || "")) return;
    var details = document.querySelector(hash + " details");
    if (details) details.open = true;
  }

  function feedback(target) {
    var box = target.closest(".dr-answer").querySelector(".feedback");
    var form = box.querySelector('[data-role="feedback-form"]');
    var say = function (text) { box.querySelector('[data-role="feedback-status"]').textContent = text; };
    var send = function (control, payload) { return U.act(control, "POST", box.getAttribute("data-feedback-url"), payload); };
    var rated = function (useful) {
      box.querySelectorAll('[data-action="feedback-useful"], [data-action="feedback-not-useful"]').forEach(function (b) { b.disabled = true; });
      box.querySelector('[data-action="feedback-' + (useful ? "useful" : "not-useful") + '"]').classList.add("chosen");
      say(U.t("feedback.thanks"));
    };
    var toggle = function (open, notUseful) {
      form.hidden = !open;
      form.setAttribute("data-useful", notUseful ? "false" : "");
      box.querySelector('[data-action="feedback-not-useful"]').setAttribute("aria-expanded", String(open && notUseful));
      box.querySelector('[data-action="feedback-report"]').setAttribute("aria-expanded", String(open && !notUseful));
      if (!open) return;
      box.querySelector('[data-role="feedback-form-title"]').textContent = U.t(notUseful ? "feedback.not_useful_title" : "feedback.report_title");
      say("");
      form.querySelector("select").focus();
    };
    return { form: form, say: say, send: send, rated: rated, toggle: toggle };
  }

  function feedbackClick(target, action) {
    var box = feedback(target);
    if (action === "feedback-not-useful" || action === "feedback-report") return box.toggle(true, action === "feedback-not-useful");
    if (action === "feedback-close") return box.toggle(false);
    if (action === "feedback-useful") {
      return box.send(target, { useful: true }).then(function (result) { return result.ok ? box.rated(true) : box.say(result.message); });
    }
    var said = target.parentNode.querySelector(".error");
    if (said) said.remove(); // a previous attempt's message
    box.send(target, { reason: "source_does_not_say", citation_number: Number(target.getAttribute("data-citation")) }).then(function (result) {
      var note = U.parse('<span role="status" class="small ' + (result.ok ? "reported" : "error") + '"></span>');
      note.textContent = result.ok ? U.t("feedback.reported_citation") : " " + result.message;
      if (result.ok) target.replaceWith(note);
      else target.after(note);
    });
  }

  document.addEventListener("click", function (event) {
    var target = event.target.closest("a[href^='#cite-'], [data-action]");
    var action = target && target.getAttribute("data-action");
    if (!target) return;
    if (!action) return openCitation(target.getAttribute("href")); // before the browser scrolls to it
    if (action.indexOf("feedback-") === 0) return feedbackClick(target, action);
    if (action === "acknowledge") {
      U.act(target, "POST", target.getAttribute("data-url")).then(function (result) {
        if (!result.ok) return void (target.title = result.message);
        var done = U.parse('<span class="ack-done small"></span>');
        done.textContent = target.getAttribute("data-done");
        target.replaceWith(done);
      });
    } else if (action === "copy-link") {
      var status = document.querySelector('[data-role="copy-status"]');
      var show = function (key) { if (status) status.textContent = U.t(key); };
      navigator.clipboard.writeText(target.getAttribute("data-url")).then(function () { show("copied"); }, function () { show("copy_failed"); });
    }
  });

  document.addEventListener("submit", function (event) {
    var form = event.target.closest('[data-role="feedback-form"]');
    if (!form) return;
    event.preventDefault();
    var box = feedback(form), notUseful = form.getAttribute("data-useful") === "false";
    var payload = { reason: form.elements.reason.value, note: form.elements.note.value };
    if (notUseful) payload.useful = false;
    var button = form.querySelector('[type="submit"]');
    box.send(button, payload).then(function (result) {
      button.disabled = false;
      if (!result.ok) return box.say(result.message); // the form stays open with what was typed
      form.reset();
      box.toggle(false);
      if (notUseful) return box.rated(false);
      form.closest(".feedback").querySelector('[data-action="feedback-report"]').disabled = true; // one report per reader
      box.say(U.t("feedback.thanks"));
    });
  });

  // The copy button needs the Clipboard API; without it the link field stays the way to copy.
  if (navigator.clipboard) document.querySelectorAll("[data-action='copy-link']").forEach(function (button) { button.hidden = false; });
  // A link from elsewhere (the feedback page, a shared "#cite-…" address) opens the cited entry.
  openCitation(window.location.hash);
})();
