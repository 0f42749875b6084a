/* The channel chat page: one box for ClassroomGPT and Deep Research. The teal magnifier switches
   the next message to a research; otherwise the auto-judge may suggest one, and nothing starts
   without the student's click. Everything new in the conversation is a server-rendered fragment. */
(function () {
  "use strict";
  var U = window.Uedu;
  var page = document.getElementById("chat");
  if (!page) return;
  var form = document.getElementById("composer"), box = document.getElementById("message");
  var alertBox = document.getElementById("composer-alert"), statusLine = document.getElementById("composer-status");
  var toggle = document.getElementById("dr-toggle"), quotaLine = document.getElementById("dr-quota");
  var suggestion = document.getElementById("suggestion"), clarify = document.getElementById("clarify");
  var channelId = Number(page.getAttribute("data-channel-id"));
  var busy = false;

  function researchMode() {
    return !!toggle && toggle.getAttribute("aria-pressed") === "true";
  }

  function setResearchMode(on) {
    if (!toggle) return;
    toggle.setAttribute("aria-pressed", on ? "true" : "false");
    form.classList.toggle("dr-mode", on);
    box.placeholder = U.t(on ? "placeholder_research" : "placeholder_chat");
    setStatus("");
  }

  function setStatus(key) {
    statusLine.textContent = key ? U.t(key) : (researchMode() ? U.t("dr_on") : "");
  }

  function showAlert(message) {
    alertBox.textContent = message;
    alertBox.hidden = !message;
  }

  /* One request of the composer: the form is busy meanwhile, with a line saying what it waits for.
     Resolves to the result, or to {ok: false, message} when the server could not be reached. */
  function call(statusKey, url, body) {
    busy = true;
    form.classList.add("busy");
    setStatus(statusKey);
    return U.act(document.getElementById("send"), "POST", url, body).then(function (result) {
      busy = false;
      form.classList.remove("busy");
      document.getElementById("send").disabled = false;
      setStatus("");
      return result;
    });
  }

  function appendTurn(node) {
    var empty = document.getElementById("conversation-empty");
    if (empty) empty.remove();
    document.getElementById("conversation").appendChild(node);
    window.UeduResearch.attach(node);
    watchBloom(node);
    node.scrollIntoView({ block: "nearest" });
  }

  function submit() {
    if (busy) return;
    showAlert("");
    suggestion.hidden = clarify.hidden = true;
    if (researchMode()) startResearch("forced");
    else if (page.getAttribute("data-dr-enabled") === "true" && box.value.trim()) judgeThenSend();
    else sendChat();
  }

  function judgeThenSend() {
    call("judging", page.getAttribute("data-judge-url"), { question: box.value, channel_id: channelId }).then(function (result) {
      if (!result.ok || !result.data.suggest) return sendChat(); // the judge only advises: when it says no, or cannot say, chat as usual
      var list = suggestion.querySelector('[data-role="reasons"]');
      list.textContent = "";
      (result.data.reasons || []).forEach(function (reason) { list.appendChild(document.createElement("li")).textContent = reason; });
      suggestion.hidden = false;
      suggestion.querySelector('[data-action="upgrade"]').focus();
    });
  }

  function sendChat() {
    var body = new FormData(form);
    body.set("message", box.value);
    call("thinking", form.action, body).then(function (result) {
      // 200, or 503 with the saved question and a note: either way the message is in the log.
      if (!result.html) return showAlert(result.message);
      appendTurn(U.parse(result.data));
      box.value = "";
    });
  }

  /* Context alignment: before a research starts, ask the server whether the question leaves out
     something the research needs (a time range, …). It only advises: if it cannot say, start. */
  function startResearch(mode) {
    window.UeduResearch.askToNotify(); // on the student's click, so the browser may ask
    if (!box.value.trim()) return doStart(mode, null); // the start answers with its own readable message
    call("checking_context", page.getAttribute("data-context-url"), { question: box.value }).then(function (result) {
      var questions = result.ok && result.data.needs_clarification ? result.data.questions || [] : [];
      if (!questions.length) return doStart(mode, null);
      var fields = clarify.querySelector('[data-role="fields"]');
      fields.textContent = "";
      questions.forEach(function (q) {
        var label = fields.appendChild(document.createElement("label"));
        var input = fields.appendChild(U.parse('<input type="text" maxlength="200">'));
        label.className = "clarify-field";
        label.setAttribute("for", input.id = "clarify-" + q.key);
        label.textContent = q.question;
        input.name = q.key;
        input.value = q["default"] || "";
      });
      clarify.setAttribute("data-mode", mode);
      clarify.hidden = false;
      clarify.querySelector('[data-action="start-with-context"]').focus();
    });
  }

  function doStart(mode, context) {
    var payload = { question: box.value, channel_id: channelId, trigger_mode: mode };
    if (context) payload.context = context;
    call("starting", page.getAttribute("data-start-url"), payload).then(function (result) {
      refreshQuota();
      // quota used up, rate limit, platform cap, bad input: the API's own words
      if (result.status !== 201) return showAlert(result.message);
      box.value = "";
      setResearchMode(false);
      U.fragment(page.getAttribute("data-turn-url").replace("00000000-0000-0000-0000-000000000000", result.data.task_uuid), 3)
        .then(appendTurn, function () { showAlert(U.t("load_failed")); });
    });
  }

  function refreshQuota() {
    if (!quotaLine) return;
    U.request("GET", page.getAttribute("data-quota-url")).then(function (result) {
      if (!result.ok) return;
      var q = result.data, empty = !q.unlimited && q.remaining <= 0;
      quotaLine.textContent = q.platform_cap_reached ? U.t("quota_cap") : q.unlimited ? U.t("quota_unlimited")
        : empty ? U.t("quota_empty") : U.t("quota_left", { remaining: Number(q.remaining), limit: q.limit });
      quotaLine.classList.toggle("empty", empty);
    }, function () {});
  }

  /* The Bloom badge of a question, polled until the classification arrives (every 4 s, 45 times). */
  function watchBloom(root) {
    root.querySelectorAll("[data-bloom-url]").forEach(function (slot) {
      if (slot.uedu) return;
      slot.uedu = true;
      var tries = 0;
      (function poll() {
        tries += 1;
        U.request("GET", slot.getAttribute("data-bloom-url")).then(function (result) {
          if (result.ok && result.data.bloom_level) {
            var badge = slot.appendChild(document.createElement("span"));
            badge.className = "badge bloom bloom-" + result.data.bloom_level;
            badge.title = U.t("bloom_title");
            badge.textContent = result.data.label;
            slot.removeAttribute("data-bloom-url");
          } else if (tries < 45 && result.status !== 404) window.setTimeout(poll, 4000);
        }, function () { if (tries < 45) window.setTimeout(poll, 4000); });
      })();
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
  suggestion.addEventListener("click", function (event) {
    var action = event.target.closest("[data-action]");
    if (!action || busy) return;
    suggestion.hidden = clarify.hidden = true;
    if (action.getAttribute("data-action") === "upgrade") startResearch("auto");
    else sendChat();
  });
  clarify.addEventListener("click", function (event) {
    var action = event.target.closest("[data-action]");
    if (!action || busy) return;
    var context = null;
    if (action.getAttribute("data-action") === "start-with-context") {
      context = {};
      clarify.querySelectorAll('[data-role="fields"] input').forEach(function (input) {
        if (input.value.trim()) context[input.name] = input.value.trim();
      });
    }
    clarify.hidden = true;
    doStart(clarify.getAttribute("data-mode") || "forced", context);
  });

  refreshQuota();
  watchBloom(document);
  var last = document.getElementById("conversation").lastElementChild;
  if (last) last.scrollIntoView({ block: "nearest" });
})();
