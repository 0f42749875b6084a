/* The channel chat page: one box for ClassroomGPT and Deep Research. The teal magnifier switches
   the next message to a research; otherwise the auto-judge may suggest one, and nothing starts
   without the student's click. Everything new in the conversation is a server-rendered fragment. */
(function () {
  "use strict";
  var U = window.Uedu;
  var R = window.UeduResearch;
  var page = document.getElementById("chat");
  if (!page) return;

  var form = document.getElementById("composer");
  var box = document.getElementById("message");
  var sendButton = document.getElementById("send");
  var alertBox = document.getElementById("composer-alert");
  var statusLine = document.getElementById("composer-status");
  var toggle = document.getElementById("dr-toggle");
  var quotaLine = document.getElementById("dr-quota");
  var suggestion = document.getElementById("suggestion");
  var clarify = document.getElementById("clarify");
  var conversation = document.getElementById("conversation");
  var channelId = Number(page.getAttribute("data-channel-id"));
  var researchEnabled = page.getAttribute("data-dr-enabled") === "true";
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

  function setBusy(on, key) {
    busy = on;
    sendButton.disabled = on;
    form.classList.toggle("busy", on);
    setStatus(on ? key : "");
  }

  function showAlert(message) {
    alertBox.textContent = message;
    alertBox.hidden = false;
  }

  function hideAlert() {
    alertBox.hidden = true;
    alertBox.textContent = "";
  }

  function hideSuggestion() {
    suggestion.hidden = true;
    clarify.hidden = true;
  }

  function appendTurn(node) {
    var empty = document.getElementById("conversation-empty");
    if (empty) empty.remove();
    conversation.appendChild(node);
    R.attach(node);
    watchBloom(node);
    node.scrollIntoView({ block: "nearest" });
  }

  /* ---------------------------------------------------------------- sending */

  function submit() {
    if (busy) return;
    var text = box.value;
    hideAlert();
    hideSuggestion();
    if (researchMode()) {
      startResearch(text, "forced");
    } else if (researchEnabled && text.trim()) {
      judgeThenSend(text);
    } else {
      sendChat(text);
    }
  }

  function judgeThenSend(text) {
    setBusy(true, "judging");
    U.request("POST", page.getAttribute("data-judge-url"), { question: text, channel_id: channelId }).then(function (result) {
      setBusy(false);
      if (result.ok && result.data.suggest) {
        showSuggestion(result.data.reasons || []);
      } else {
        sendChat(text); // the judge only advises: when it says no, or cannot say, chat as usual
      }
    }, function () {
      setBusy(false);
      sendChat(text);
    });
  }

  function showSuggestion(reasons) {
    var list = suggestion.querySelector('[data-role="reasons"]');
    list.textContent = "";
    reasons.forEach(function (reason) {
      var item = document.createElement("li");
      item.textContent = reason;
      list.appendChild(item);
    });
    suggestion.hidden = false;
    suggestion.querySelector('[data-action="upgrade"]').focus();
  }

  function sendChat(text) {
    setBusy(true, "thinking");
    var body = new FormData(form);
    body.set("message", text);
    fetch(form.action, {
      method: "POST",
      body: body,
      credentials: "same-origin",
      headers: { "X-Requested-With": "fetch", "X-CSRFToken": U.csrfToken() },
    }).then(function (response) {
      var type = response.headers.get("Content-Type") || "";
      if (type.indexOf("text/html") >= 0) {
        // 200, or 503 with the saved question and a note: either way the message is in the log.
        return response.text().then(function (html) {
          var template = document.createElement("template");
          template.innerHTML = html.trim();
          appendTurn(template.content.firstElementChild);
          box.value = "";
        });
      }
      return response.json().then(function (data) {
        showAlert(U.errorMessage({ data: data }));
      });
    }).catch(function () {
      showAlert(U.t("network_error"));
    }).then(function () {
      setBusy(false);
    });
  }

  /* Context alignment: before a research starts, ask the server whether the question leaves out
     something the research needs (a time range, …). It only advises: if it cannot say, start. */
  function startResearch(text, mode) {
    if (!text.trim()) {
      doStart(text, mode, null); // the start answers with its own readable message
      return;
    }
    setBusy(true, "checking_context");
    U.request("POST", page.getAttribute("data-context-url"), { question: text }).then(function (result) {
      setBusy(false);
      var questions = result.ok && result.data.needs_clarification ? result.data.questions || [] : [];
      if (questions.length) showClarify(mode, questions);
      else doStart(text, mode, null);
    }, function () {
      setBusy(false);
      doStart(text, mode, null);
    });
  }

  function showClarify(mode, questions) {
    var fields = clarify.querySelector('[data-role="fields"]');
    fields.textContent = "";
    questions.forEach(function (q) {
      var label = document.createElement("label");
      label.className = "clarify-field";
      label.setAttribute("for", "clarify-" + q.key);
      label.textContent = q.question;
      var input = document.createElement("input");
      input.type = "text";
      input.id = "clarify-" + q.key;
      input.name = q.key;
      input.maxLength = 200;
      input.value = q["default"] || "";
      fields.append(label, input);
    });
    clarify.setAttribute("data-mode", mode);
    clarify.hidden = false;
    clarify.querySelector('[data-action="start-with-context"]').focus();
  }

  function doStart(text, mode, context) {
    setBusy(true, "starting");
    var payload = { question: text, channel_id: channelId, trigger_mode: mode };
    if (context) payload.context = context;
    U.request("POST", page.getAttribute("data-start-url"), payload).then(function (result) {
      setBusy(false);
      refreshQuota();
      if (result.status !== 201) {
        showAlert(U.errorMessage(result)); // quota used up, rate limit, platform cap, bad input: the API's own words
        return;
      }
      box.value = "";
      setResearchMode(false);
      var url = page.getAttribute("data-turn-url").replace("00000000-0000-0000-0000-000000000000", result.data.task_uuid);
      loadTurn(url, 0);
    }, function () {
      setBusy(false);
      showAlert(U.t("network_error"));
    });
  }

  function loadTurn(url, attempt) {
    R.fetchFragment(url).then(appendTurn, function () {
      if (attempt < 3) window.setTimeout(function () { loadTurn(url, attempt + 1); }, 1000 * (attempt + 1));
      else showAlert(U.t("load_failed"));
    });
  }

  /* ---------------------------------------------------------------- quota */

  function refreshQuota() {
    if (!quotaLine) return;
    U.request("GET", page.getAttribute("data-quota-url")).then(function (result) {
      if (!result.ok) return;
      var q = result.data;
      var text;
      if (q.platform_cap_reached) text = U.t("quota_cap");
      else if (q.unlimited) text = U.t("quota_unlimited");
      else if (q.remaining <= 0) text = U.t("quota_empty");
      else text = U.t("quota_left", { remaining: Number(q.remaining), limit: q.limit });
      quotaLine.textContent = text;
      quotaLine.classList.toggle("empty", !q.unlimited && q.remaining <= 0);
    }, function () {});
  }

  /* ---------------------------------------------------------------- Bloom badges */

  var BLOOM_INTERVAL_MS = 4000;
  var BLOOM_TRIES = 45;

  function watchBloom(root) {
    root.querySelectorAll("[data-bloom-url]").forEach(function (slot) {
      if (slot.uedu) return;
      slot.uedu = true;
      var tries = 0;
      (function poll() {
        tries += 1;
        U.request("GET", slot.getAttribute("data-bloom-url")).then(function (result) {
          if (result.ok && result.data.bloom_level) {
            var badge = document.createElement("span");
            badge.className = "badge bloom bloom-" + result.data.bloom_level;
            badge.title = U.t("bloom_title");
            badge.textContent = result.data.label;
            slot.appendChild(badge);
            slot.removeAttribute("data-bloom-url");
          } else if (tries < BLOOM_TRIES && result.status !== 404) {
            window.setTimeout(poll, BLOOM_INTERVAL_MS);
          }
        }, function () {
          if (tries < BLOOM_TRIES) window.setTimeout(poll, BLOOM_INTERVAL_MS);
        });
      })();
    });
  }

  /* ---------------------------------------------------------------- wiring */

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    submit();
  });
  box.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      submit();
    }
  });
  if (toggle) {
    toggle.hidden = false;
    toggle.addEventListener("click", function () { setResearchMode(!researchMode()); });
  }
  suggestion.addEventListener("click", function (event) {
    var action = event.target.closest("[data-action]");
    if (!action || busy) return;
    hideSuggestion();
    if (action.getAttribute("data-action") === "upgrade") startResearch(box.value, "auto");
    else sendChat(box.value);
  });
  clarify.addEventListener("click", function (event) {
    var action = event.target.closest("[data-action]");
    if (!action || busy) return;
    var mode = clarify.getAttribute("data-mode") || "forced";
    var context = null;
    if (action.getAttribute("data-action") === "start-with-context") {
      context = {};
      clarify.querySelectorAll('[data-role="fields"] input').forEach(function (input) {
        if (input.value.trim()) context[input.name] = input.value.trim();
      });
    }
    clarify.hidden = true;
    doStart(box.value, mode, context);
  });

  refreshQuota();
  watchBloom(document);
  var last = conversation.lastElementChild;
  if (last) last.scrollIntoView({ block: "nearest" });
})();
