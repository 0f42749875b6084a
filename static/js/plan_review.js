/* The plan editor inside a progress card: while a research waits for the plan review, its owner
   edits, removes or adds sub-questions and continues; everyone sees the countdown. The card calls
   open(event data), close(event data) and tick() (every second). */
(function () {
  "use strict";
  var U = window.Uedu;

  function attach(card) {
    var el = card.el, role = card.role.bind(card);
    var max = Number(el.getAttribute("data-max-sub-questions")) || 6;
    var owner = el.getAttribute("data-owner") === "true";
    var form = role("review-form");
    var review = null; // {deadline, proposed, done, sent} once the review opened

    function tick() {
      if (!review || review.done) return;
      var left = Math.max(0, Math.ceil((review.deadline - Date.now()) / 1000));
      role("countdown").textContent = isNaN(review.deadline) ? "" : left > 0 ? U.t("review.countdown", { time: U.clock(left) }) : U.t("review.countdown_over");
    }

    function add(text, focus) {
      if (role("review-list").children.length >= max) return;
      var item = role("review-list").appendChild(U.row(el, "sub-question-row"));
      item.querySelector("input").value = text;
      renumber();
      if (focus) item.querySelector("input").focus();
    }

    function renumber() {
      var items = role("review-list").children;
      Array.prototype.forEach.call(items, function (item, i) {
        item.querySelector("input").setAttribute("aria-label", U.t("review.sub_question", { n: i + 1 }));
        item.querySelector("button").disabled = items.length <= 1 || review.sent;
      });
      el.querySelector('[data-action="add-sub-question"]').disabled = items.length >= max || review.sent;
      role("review-limit").textContent = items.length >= max ? U.t("review.limit", { max: max }) : "";
    }

    function open(data) {
      review = { deadline: Date.parse(data.deadline), proposed: (data.sub_questions || []).slice(), done: false, sent: false };
      role("review").hidden = false;
      el.setAttribute("data-review", "open");
      var intro = owner ? (data.mode === "required" ? "review.intro_required" : "review.intro_optional") : "review.intro_other";
      role("review-intro").textContent = U.t(intro, { max: max });
      card.setPhase(owner ? "awaiting_review" : "awaiting_review_other");
      if (form) {
        role("plan").hidden = true; // the editable copy below replaces the read-only list
        role("review-list").textContent = "";
        review.proposed.forEach(function (question) { add(question, false); });
      }
      tick();
    }

    function close(data) {
      if (review) review.done = true;
      role("review").hidden = true;
      el.setAttribute("data-review", "done");
      // Show the plan actually researched, whoever edited it and however the wait ended.
      card.listSubquestions(data.sub_questions);
      card.show("plan-note", U.t(data.timed_out ? "review.timed_out" : (data.plan_edited ? "review.edited" : "review.as_proposed")), true);
      card.setPhase("researching", { round: 1 });
    }

    function submit(event) {
      event.preventDefault();
      if (!review || review.sent) return;
      var inputs = Array.prototype.slice.call(role("review-list").querySelectorAll("input"));
      var questions = inputs.map(function (input) { return input.value.trim(); }).filter(Boolean);
      if (!questions.length) return card.show("review-error", U.t("review.empty"), true);
      var unchanged = questions.join("\n") === review.proposed.join("\n");
      role("review-error").hidden = true;
      U.act(el.querySelector('[data-action="continue-plan"]'), "POST", el.getAttribute("data-plan-url"), unchanged ? {} : { sub_questions: questions }).then(function (result) {
        if (!result.ok) return card.show("review-error", result.message, true);
        review.sent = true;
        inputs.forEach(function (input) { input.readOnly = true; });
        renumber();
        card.setPhase("continuing");
      });
    }

    if (form) {
      form.addEventListener("submit", submit);
      form.addEventListener("click", function (event) {
        var action = event.target.closest("[data-action]");
        if (!action || !review || review.sent) return;
        if (action.getAttribute("data-action") === "add-sub-question") return add("", true);
        if (action.getAttribute("data-action") !== "remove-sub-question") return;
        var item = action.closest("li"), next = item.nextElementSibling || item.previousElementSibling;
        item.remove();
        renumber();
        if (next) next.querySelector("input").focus();
      });
    }
    return { open: open, close: close, tick: tick };
  }

  window.UeduPlanReview = { attach: attach };
})();
