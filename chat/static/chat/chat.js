/* The channel chat page: one box for ClassroomGPT and Deep Research. The teal magnifier switches
   the next message to a research; otherwise the auto-judge may suggest one, and nothing starts
   without the student's click. Everything new in the conversation is a server-rendered fragment. */
(function () {
  "use strict";
  var U = window.Uedu;
  var page = document.getElementById("chat");
  if (!page) return;
  function $(id) { return document.getElementById(id); }
  var form = $("composer"), box = $("message"), toggle = $("dr-toggle"), suggestion = $("suggestion"), clarify = $("clarify");
  var busy = false;

  function researchMode() {
    return !!toggle && toggle.getAttribute("aria-pressed") === "true";
  }

  function setResearchMode(on) {
    toggle.setAttribute("aria-pressed", String(on));
    form.classList.toggle("dr-mode", on);
    box.placeholder = U.t(on ? "placeholder_research" : "placeholder_chat");
    setStatus("");
  }

  function setStatus(key) {
    $("composer-status").textContent = key ? U.t(key) : (researchMode() ? U.t("dr_on") : "");
  }

  function showAlert(message) {
    $("composer-alert").textContent = message;
    $("composer-alert").hidden = !message;
  }

  /* One request of the composer: the form is busy meanwhile, with a line saying what it waits for. */
  function call(statusKey, url, body) {
    busy = true;
    form.classList.add("busy");
    setStatus(statusKey);
    return U.act($("send"), "POST", url, body).then(function (result) {
      busy = $("send").disabled = false;
      form.classList.remove("busy");
      setStatus("");
      return result;
    });
  }

  function appendTurn(node) {
    if ($("conversation-empty")) $("conversation-empty").remove();
    $("conversation").appendChild(node);
    window.UeduResearch.attach(node);
    window.htmx.process(node); // its Bloom badge and answer controls are htmx fragments
    show(node);
  }

  /* Bring a new turn or answer to the reader: its top at the top of the window, so that the
     sticky composer, which covers the bottom of the page, hides none of its beginning. */
  function show(node) { node.scrollIntoView({ block: "start" }); }

  /* A research's answer replaced its progress card: if the reader was watching the card, show
     the answer; if they had scrolled elsewhere, offer it with the "new answer" pill instead. */
  var pill = $("new-answer"), waiting = null;
  page.addEventListener("uedu:outcome", function (event) {
    if (event.detail && event.detail.watched) return show(event.target);
    waiting = event.target;
    pill.hidden = false;
  });
  pill.addEventListener("click", function () {
    pill.hidden = true;
    if (!waiting) return;
    var turn = waiting.closest(".turn") || waiting;
    show(waiting);
    turn.focus({ preventScroll: true }); // the turn is the answer's tab stop
    waiting = null;
  });
  window.addEventListener("scroll", function () {
    if (waiting && U.inView(waiting)) { pill.hidden = true; waiting = null; }
  }, { passive: true });

  function submit() {
    if (busy) return;
    showAlert("");
    suggestion.hidden = clarify.hidden = true;
    if (researchMode()) startResearch("forced");
    else if (page.getAttribute("data-dr-enabled") === "true" && box.value.trim()) judgeThenSend();
    else sendChat();
  }

  /* The advisers answer with a server-rendered fragment (the suggestion's reasons, the clarify
     fields), or with 204 when they have nothing to say; whatever else they answer counts as no advice. */
  function advice(statusKey, url) {
    return call(statusKey, page.getAttribute(url), new FormData(form)).then(function (result) {
      return result.status === 200 && result.html ? U.parse(result.data) : null;
    });
  }

  function judgeThenSend() {
    advice("judging", "data-suggestion-url").then(function (reasons) {
      if (!reasons) return sendChat(); // the judge only advises: when it says no, or cannot say, chat as usual
      suggestion.querySelector('[data-role="reasons"]').replaceWith(reasons);
      suggestion.hidden = false;
      suggestion.querySelector('[data-action="upgrade"]').focus();
    });
  }

  function sendChat() {
    var body = new FormData(form);
    body.set("message", box.value);
    call("thinking", form.action, body).then(function (result) {
      if (!result.html) return showAlert(result.message); // 200, or 503 with the saved question and a note, are turns
      appendTurn(U.parse(result.data));
      box.value = "";
    });
  }

  /* Context alignment: before a research starts, ask the server whether the question leaves out
     something the research needs (a time range, …). It only advises: if it cannot say, start. */
  function startResearch(mode) {
    window.UeduResearch.askToNotify(); // on the student's click, so the browser may ask
    if (!box.value.trim()) return doStart(mode, null); // the start answers with its own readable message
    advice("checking_context", "data-clarify-url").then(function (fields) {
      if (!fields) return doStart(mode, null);
      clarify.querySelector('[data-role="fields"]').replaceWith(fields);
      clarify.setAttribute("data-mode", mode);
      clarify.hidden = false;
      clarify.querySelector('[data-action="start-with-context"]').focus();
    });
  }

  function doStart(mode, context) {
    var payload = { question: box.value, channel_id: Number(page.getAttribute("data-channel-id")), trigger_mode: mode };
    if (context) payload.context = context;
    if (form.elements.follow_up) payload.follow_up = form.elements.follow_up.value; // "ask a follow-up" on a result page
    call("starting", page.getAttribute("data-start-url"), payload).then(function (result) {
      window.htmx.trigger(document.body, "quota-changed"); // the quota line (chat/_quota.html) fetches itself again
      if (result.status !== 201) return showAlert(result.message); // quota, rate limit, platform cap, bad input: the API's own words
      box.value = "";
      setResearchMode(false);
      U.fragment(page.getAttribute("data-turn-url").replace("00000000-0000-0000-0000-000000000000", result.data.task_uuid), 3)
        .then(appendTurn, function () { showAlert(U.t("load_failed")); });
    });
  }

  form.addEventListener("submit", function (event) { event.preventDefault(); submit(); });
  box.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) { event.preventDefault(); submit(); }
  });
  if (toggle) {
    toggle.hidden = false;
    toggle.addEventListener("click", function () { setResearchMode(!researchMode()); });
  }
  page.addEventListener("click", function (event) {
    if (event.target.closest('#follow-up [data-action="detach"]')) { $("follow-up").remove(); return box.focus(); }
    var action = event.target.closest("#suggestion [data-action], #clarify [data-action]");
    var name = action && action.getAttribute("data-action"), context = null;
    if (!action || busy) return;
    suggestion.hidden = clarify.hidden = true;
    if (name === "upgrade") return startResearch("auto");
    if (name === "keep") return sendChat();
    if (name === "start-with-context") {
      context = {};
      clarify.querySelectorAll('[data-role="fields"] input').forEach(function (input) { if (input.value.trim()) context[input.name] = input.value.trim(); });
    }
    doStart(clarify.getAttribute("data-mode") || "forced", context);
  });

  // Older turns come in as htmx fragments ("Load older", chat/_older_turns.html): a research card
  // among them (one still running that the page did not pin) gets its live updates like any other.
  document.addEventListener("htmx:load", function (event) {
    if ($("conversation").contains(event.target)) window.UeduResearch.attach(event.target);
  });

  /* One tab stop per turn: a long conversation is otherwise dozens of Tab presses between the
     top of the page and the message box. A finished turn is one stop, named by its question;
     Enter puts its links and buttons in the tab order until the focus leaves the turn, Escape
     returns to the turn. A running research's turn keeps its controls (Cancel, the plan review)
     in the order. Without this script every control is tabbable, as on any page. */
  var CONTROLS = "a[href], button, input, select, textarea, summary, [tabindex]";
  function controls(turn) {
    return Array.prototype.filter.call(turn.querySelectorAll(CONTROLS), function (el) { return el !== turn; });
  }
  function enter(turn) {
    turn.setAttribute("data-open", "");
    controls(turn).forEach(function (el) {
      if (!el.hasAttribute("data-tab")) return;
      if (el.getAttribute("data-tab")) el.setAttribute("tabindex", el.getAttribute("data-tab"));
      else el.removeAttribute("tabindex");
      el.removeAttribute("data-tab");
    });
  }
  function park(turn) {
    if (turn.querySelector(".dr-card")) { turn.removeAttribute("tabindex"); return enter(turn); }
    turn.removeAttribute("data-open");
    turn.tabIndex = 0;
    turn.setAttribute("aria-describedby", "turn-hint");
    var question = turn.querySelector(".bubble.question");
    if (question) turn.setAttribute("aria-labelledby", question.id);
    controls(turn).forEach(function (el) {
      if (!el.hasAttribute("data-tab")) el.setAttribute("data-tab", el.getAttribute("tabindex") || "");
      el.tabIndex = -1;
    });
  }
  function turnOf(node) { return node && node.closest ? node.closest("#conversation > .turn") : null; }
  function settle() { // new turns and swapped-in controls follow their turn's state
    $("conversation").querySelectorAll(":scope > .turn").forEach(function (turn) {
      if (turn.hasAttribute("data-open") && !turn.querySelector(".dr-card")) enter(turn); else park(turn);
    });
  }
  $("conversation").addEventListener("keydown", function (event) {
    var turn = turnOf(event.target);
    if (!turn) return;
    if (event.target === turn && event.key === "Enter") {
      event.preventDefault();
      enter(turn);
      if (controls(turn)[0]) controls(turn)[0].focus();
    } else if (event.target !== turn && event.key === "Escape" && turn.hasAttribute("data-open")) {
      park(turn);
      turn.focus();
    }
  });
  $("conversation").addEventListener("focusin", function (event) {
    var turn = turnOf(event.target);
    if (turn && event.target !== turn && !turn.hasAttribute("data-open")) enter(turn); // a click, a link to an anchor
  });
  $("conversation").addEventListener("focusout", function (event) {
    var turn = turnOf(event.target);
    // Only when the focus moves elsewhere: a control swapped out by htmx leaves it nowhere.
    if (turn && event.relatedTarget && !turn.contains(event.relatedTarget) && !turn.querySelector(".dr-card")) park(turn);
  });
  new MutationObserver(settle).observe($("conversation"), { childList: true, subtree: true });
  settle();

  if ($("conversation").lastElementChild) $("conversation").lastElementChild.scrollIntoView({ block: "nearest" });
})();
