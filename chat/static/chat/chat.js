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
    call("judging", page.getAttribute("data-judge-url"), { question: box.value, channel_id: Number(page.getAttribute("data-channel-id")) }).then(function (result) {
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
    call("checking_context", page.getAttribute("data-context-url"), { question: box.value }).then(function (result) {
      var questions = result.ok && result.data.needs_clarification ? result.data.questions || [] : [];
      if (!questions.length) return doStart(mode, null);
      var fields = clarify.querySelector('[data-role="fields"]');
      fields.textContent = "";
      questions.forEach(function (q) {
        var label = fields.appendChild(U.parse('<label class="clarify-field"></label>'));
        var input = fields.appendChild(U.parse('<input type="text" maxlength="200">'));
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
    var payload = { question: box.value, channel_id: Number(page.getAttribute("data-channel-id")), trigger_mode: mode };
    if (context) payload.context = context;
    call("starting", page.getAttribute("data-start-url"), payload).then(function (result) {
      refreshQuota();
      if (result.status !== 201) return showAlert(result.message); // quota, rate limit, platform cap, bad input: the API's own words
      box.value = "";
      setResearchMode(false);
      U.fragment(page.getAttribute("data-turn-url").replace("00000000-0000-0000-0000-000000000000", result.data.task_uuid), 3)
        .then(appendTurn, function () { showAlert(U.t("load_failed")); });
    });
  }

  function refreshQuota() {
    if ($("dr-quota")) U.request("GET", page.getAttribute("data-quota-url")).then(function (result) {
      if (!result.ok) return;
      var q = result.data, empty = !q.unlimited && q.remaining <= 0;
      $("dr-quota").textContent = q.platform_cap_reached ? U.t("quota_cap") : q.unlimited ? U.t("quota_unlimited")
        : empty ? U.t("quota_empty") : U.t("quota_left", { remaining: Number(q.remaining), limit: q.limit });
      $("dr-quota").classList.toggle("empty", empty);
    }, function () {});
  }

  /* The Bloom badge of a question, polled until the classification arrives (every 4 s, 45 times). */
  function watchBloom(root) {
    root.querySelectorAll("[data-bloom-url]").forEach(function (slot) {
      var tries = 0;
      if (slot.uedu) return;
      slot.uedu = true;
      (function poll() {
        var again = function () { if (++tries < 45) window.setTimeout(poll, 4000); };
        U.request("GET", slot.getAttribute("data-bloom-url")).then(function (result) {
          if (!result.ok || !result.data.bloom_level) return result.status === 404 ? null : again(); // 404: no such question
          var badge = slot.appendChild(U.parse('<span class="badge bloom"></span>'));
          badge.classList.add("bloom-" + result.data.bloom_level);
          badge.title = U.t("bloom_title");
          badge.textContent = result.data.label;
          slot.removeAttribute("data-bloom-url");
        }, again);
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
  page.addEventListener("click", function (event) {
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

  refreshQuota();
  watchBloom(document);
  if ($("conversation").lastElementChild) $("conversation").lastElementChild.scrollIntoView({ block: "nearest" });
})();
