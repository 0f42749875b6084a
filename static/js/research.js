/* Deep Research in the page: the live progress card (WebSocket with resume by seq, HTTP catch-up
   while the socket is down), the swap to the server-rendered answer when the research ends, and
   the answer's small behaviours (citation links, "I understand", copy link). */
(function () {
  "use strict";
  var U = window.Uedu;
  var TERMINAL = { completed: true, failed: true, cancelled: true };
  var IDLE_MS = 45000; // the server sends a heartbeat every 15 s; silence this long means a dead socket

  function ProgressCard(el) {
    this.el = el;
    this.uuid = el.getAttribute("data-task");
    this.lastSeq = 0;
    this.done = false;
    this.attempts = 0;
    this.socket = null;
    this.watchdog = null;
    this.created = Date.parse(el.getAttribute("data-created"));
    this.timer = window.setInterval(this.tick.bind(this), 1000);
    this.tick();
    var cancel = el.querySelector('[data-action="cancel"]');
    if (cancel) cancel.addEventListener("click", this.cancel.bind(this, cancel));
    this.review = null;
    this.maxSubQuestions = Number(el.getAttribute("data-max-sub-questions")) || 6;
    this.maxSubQuestionChars = Number(el.getAttribute("data-max-sub-question-chars")) || 500;
    var reviewForm = this.role("review-form");
    if (reviewForm) {
      reviewForm.addEventListener("submit", this.submitPlan.bind(this));
      reviewForm.addEventListener("click", this.reviewClick.bind(this));
    }
    this.connect();
  }

  ProgressCard.prototype.role = function (name) {
    return this.el.querySelector('[data-role="' + name + '"]');
  };

  function clock(seconds) {
    var m = Math.floor(seconds / 60), s = seconds % 60;
    return m + ":" + (s < 10 ? "0" : "") + s;
  }

  ProgressCard.prototype.tick = function () {
    if (this.review && !this.review.done) this.tickReview();
    if (isNaN(this.created)) return;
    this.role("elapsed").textContent = clock(Math.max(0, Math.round((Date.now() - this.created) / 1000)));
  };

  ProgressCard.prototype.connect = function () {
    var self = this;
    var scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
    var url = scheme + window.location.host + "/ws/deep_research/" + this.uuid + "/?last_seq=" + this.lastSeq;
    var socket;
    try {
      socket = new WebSocket(url);
    } catch (e) {
      this.reconnect();
      return;
    }
    this.socket = socket;
    socket.onopen = function () {
      self.attempts = 0;
      self.role("connection").hidden = true;
      self.el.setAttribute("data-connected", "true");
      self.resetWatchdog();
    };
    socket.onmessage = function (message) {
      self.resetWatchdog();
      var event;
      try { event = JSON.parse(message.data); } catch (e) { return; }
      self.handle(event);
    };
    socket.onclose = function (closing) {
      self.el.removeAttribute("data-connected");
      window.clearTimeout(self.watchdog);
      // 4403: the server says this user may no longer see the research; asking again cannot help.
      if (self.socket === socket && !self.done && closing.code !== 4403) self.reconnect();
    };
  };

  ProgressCard.prototype.resetWatchdog = function () {
    var self = this;
    window.clearTimeout(this.watchdog);
    this.watchdog = window.setTimeout(function () {
      if (self.socket) self.socket.close();
    }, IDLE_MS);
  };

  ProgressCard.prototype.reconnect = function () {
    var self = this;
    this.socket = null;
    this.attempts += 1;
    var note = this.role("connection");
    note.textContent = U.t("reconnecting");
    note.hidden = false;
    var delay = Math.min(10000, 500 * Math.pow(2, this.attempts - 1));
    window.setTimeout(function () {
      if (self.done || !document.body.contains(self.el)) return;
      // Catch up over HTTP first, so progress shows even where WebSockets are blocked.
      self.catchUp().then(function () { if (!self.done) self.connect(); });
    }, delay);
  };

  ProgressCard.prototype.catchUp = function () {
    var self = this;
    var url = this.el.getAttribute("data-events-url") + "?after=" + this.lastSeq;
    return U.request("GET", url).then(function (result) {
      if (result.ok && Array.isArray(result.data)) result.data.forEach(self.handle.bind(self));
    }, function () {});
  };

  ProgressCard.prototype.setPhase = function (key, params) {
    this.role("phase").textContent = U.t("phase." + key, params);
    this.el.setAttribute("data-phase", key);
  };

  ProgressCard.prototype.handle = function (event) {
    if (!event || !event.type) return;
    if (event.seq !== null && event.seq !== undefined) {
      if (event.seq <= this.lastSeq) return; // already shown (replay after a reconnect)
      this.lastSeq = event.seq;
      this.el.setAttribute("data-last-seq", String(event.seq));
    }
    var data = event.data || {};
    if (typeof data.tokens_used === "number") this.role("tokens").textContent = data.tokens_used.toLocaleString();
    switch (event.type) {
      case "task_created": this.setPhase("queued"); break;
      case "status_change":
        if (data.to === "awaiting_plan_review") this.awaitReview(data);
        else if (data.from === "awaiting_plan_review") this.reviewDone(data);
        else if (data.to === "running") this.setPhase("planning");
        break;
      case "plan_complete": this.showPlan(data); break;
      case "action_thinking":
        this.role("steps").textContent = data.round;
        this.role("progress").value = data.round;
        this.setPhase("researching", { round: data.round });
        break;
      case "action_dispatch": this.dispatch(data); break;
      case "action_complete": this.complete(data); break;
      case "reflection_done": if (data.sufficient) this.setPhase("writing"); else this.setPhase("reflecting"); break;
      case "limit_hit": this.limitHit(data); break;
      case "verification_done": this.setPhase("finishing"); break;
      default: break;
    }
    if (TERMINAL[event.type]) this.finish(event.type);
  };

  // The plan's sub-questions as the card lists them (planned, then as actually researched).
  ProgressCard.prototype.listSubquestions = function (questions) {
    var list = this.role("subquestions");
    list.textContent = "";
    (questions || []).forEach(function (question) {
      var item = document.createElement("li");
      item.textContent = question;
      list.appendChild(item);
    });
    this.role("plan").hidden = !list.children.length;
  };

  ProgressCard.prototype.showPlan = function (data) {
    this.listSubquestions(data.sub_questions);
    var limits = data.limits || {};
    if (limits.max_steps) {
      this.role("max-steps").textContent = limits.max_steps;
      this.role("progress").max = limits.max_steps;
    }
    // The planner's complexity sets the research's budgets (research.engine.types.DEFAULT_BUDGETS).
    if (limits.max_tool_calls) {
      this.role("max-tool-calls").textContent = limits.max_tool_calls;
      this.role("tool-budget").hidden = false;
    }
    if (data.complexity) {
      var key = "complexity." + data.complexity;
      var label = U.t(key);
      this.role("complexity").textContent = label === key ? data.complexity : label;
      this.role("complexity-box").hidden = false;
    }
    this.setPhase("researching", { round: 1 });
  };

  /* ---------------------------------------------------------------- plan review */

  ProgressCard.prototype.isOwner = function () {
    return this.el.getAttribute("data-owner") === "true";
  };

  ProgressCard.prototype.awaitReview = function (data) {
    var owner = this.isOwner();
    var proposed = (data.sub_questions || []).slice();
    this.review = { deadline: Date.parse(data.deadline), proposed: proposed, done: false, sent: false };
    this.role("review").hidden = false;
    this.el.setAttribute("data-review", "open");
    var intro = owner ? (data.mode === "required" ? "review.intro_required" : "review.intro_optional") : "review.intro_other";
    this.role("review-intro").textContent = U.t(intro, { max: this.maxSubQuestions });
    this.setPhase(owner ? "awaiting_review" : "awaiting_review_other");
    if (owner && this.role("review-list")) {
      this.role("plan").hidden = true; // the editable copy below replaces the read-only list
      this.role("review-list").textContent = "";
      proposed.forEach(function (question) { this.addSubQuestion(question, false); }, this);
    }
    this.tickReview();
  };

  ProgressCard.prototype.tickReview = function () {
    var countdown = this.role("countdown");
    if (isNaN(this.review.deadline)) { countdown.textContent = ""; return; }
    var left = Math.max(0, Math.ceil((this.review.deadline - Date.now()) / 1000));
    countdown.textContent = left > 0 ? U.t("review.countdown", { time: clock(left) }) : U.t("review.countdown_over");
  };

  ProgressCard.prototype.addSubQuestion = function (text, focus) {
    var list = this.role("review-list");
    if (list.children.length >= this.maxSubQuestions) return;
    var item = document.createElement("li");
    var input = document.createElement("input");
    input.type = "text";
    input.name = "sub_question";
    input.value = text;
    input.maxLength = this.maxSubQuestionChars;
    var remove = document.createElement("button");
    remove.type = "button";
    remove.className = "link small";
    remove.setAttribute("data-action", "remove-sub-question");
    remove.textContent = U.t("review.remove");
    item.append(input, " ", remove);
    list.appendChild(item);
    this.renumber();
    if (focus) input.focus();
  };

  ProgressCard.prototype.renumber = function () {
    var items = this.role("review-list").children;
    var self = this;
    Array.prototype.forEach.call(items, function (item, i) {
      item.querySelector("input").setAttribute("aria-label", U.t("review.sub_question", { n: i + 1 }));
      item.querySelector("button").disabled = items.length <= 1 || self.review.sent;
    });
    var full = items.length >= this.maxSubQuestions;
    this.el.querySelector('[data-action="add-sub-question"]').disabled = full || this.review.sent;
    this.role("review-limit").textContent = full ? U.t("review.limit", { max: this.maxSubQuestions }) : "";
  };

  ProgressCard.prototype.reviewClick = function (event) {
    var action = event.target.closest("[data-action]");
    if (!action || !this.review || this.review.sent) return;
    if (action.getAttribute("data-action") === "add-sub-question") {
      this.addSubQuestion("", true);
    } else if (action.getAttribute("data-action") === "remove-sub-question") {
      var item = action.closest("li");
      var next = item.nextElementSibling || item.previousElementSibling;
      item.remove();
      this.renumber();
      if (next) next.querySelector("input").focus();
    }
  };

  ProgressCard.prototype.submitPlan = function (event) {
    event.preventDefault();
    if (!this.review || this.review.sent) return;
    var self = this;
    var error = this.role("review-error");
    var inputs = Array.prototype.slice.call(this.role("review-list").querySelectorAll("input"));
    var questions = inputs.map(function (input) { return input.value.trim(); }).filter(Boolean);
    if (!questions.length) {
      error.textContent = U.t("review.empty");
      error.hidden = false;
      return;
    }
    var proposed = this.review.proposed;
    var unchanged = questions.length === proposed.length && questions.every(function (q, i) { return q === proposed[i]; });
    var button = this.el.querySelector('[data-action="continue-plan"]');
    button.disabled = true;
    error.hidden = true;
    U.request("POST", this.el.getAttribute("data-plan-url"), unchanged ? {} : { sub_questions: questions }).then(function (result) {
      if (result.ok) {
        self.review.sent = true;
        inputs.forEach(function (input) { input.readOnly = true; });
        self.renumber();
        self.setPhase("continuing");
      } else {
        button.disabled = false;
        error.textContent = U.errorMessage(result);
        error.hidden = false;
      }
    }, function () {
      button.disabled = false;
      error.textContent = U.t("network_error");
      error.hidden = false;
    });
  };

  ProgressCard.prototype.reviewDone = function (data) {
    if (this.review) this.review.done = true;
    this.role("review").hidden = true;
    this.el.setAttribute("data-review", "done");
    // Show the plan actually researched, whoever edited it and however the wait ended.
    this.listSubquestions(data.sub_questions);
    var note = this.role("plan-note");
    note.textContent = U.t(data.timed_out ? "review.timed_out" : (data.plan_edited ? "review.edited" : "review.as_proposed"));
    note.hidden = false;
    this.setPhase("researching", { round: 1 });
  };

  ProgressCard.prototype.dispatch = function (data) {
    var list = this.role("step-list");
    (data.calls || []).forEach(function (call) {
      var item = document.createElement("li");
      item.className = "step status-running";
      item.setAttribute("data-index", call.index);
      var tool = document.createElement("code");
      tool.textContent = call.tool;
      var status = document.createElement("span");
      status.className = "step-status badge";
      status.textContent = U.t("step_status.running");
      var duration = document.createElement("span");
      duration.className = "step-duration small muted";
      var args = document.createElement("span");
      args.className = "step-args small muted";
      args.textContent = summariseArgs(call.args);
      item.append(tool, " ", status, " ", duration, " ", args);
      list.appendChild(item);
    });
    this.role("steps-box").hidden = !list.children.length;
    if (typeof data.tool_calls_used === "number") this.role("tool-calls").textContent = data.tool_calls_used;
    this.setPhase("calling");
  };

  ProgressCard.prototype.complete = function (data) {
    var item = this.role("step-list").querySelector('[data-index="' + data.index + '"]');
    if (!item) return;
    item.className = "step status-" + data.status;
    item.querySelector(".step-status").textContent = U.t("step_status." + data.status);
    item.querySelector(".step-duration").textContent = (data.duration_ms / 1000).toFixed(1) + " s";
    if (data.error) item.title = data.error;
  };

  ProgressCard.prototype.limitHit = function (data) {
    var note = this.role("limit");
    note.textContent = U.t("limit_hit", { reason: U.t("limit_reason." + data.reason) });
    note.hidden = false;
    this.setPhase("writing");
  };

  ProgressCard.prototype.cancel = function (button) {
    var self = this;
    button.disabled = true;
    this.role("phase").textContent = U.t("cancelling");
    U.request("POST", this.el.getAttribute("data-cancel-url"), { task_uuid: this.uuid }).then(function (result) {
      if (!result.ok && result.status !== 409) {
        button.disabled = false;
        self.role("phase").textContent = U.t("cancel_failed", { message: U.errorMessage(result) });
      }
    }, function () {
      button.disabled = false;
      self.role("phase").textContent = U.t("network_error");
    });
  };

  ProgressCard.prototype.finish = function (type) {
    if (this.done) return;
    this.done = true;
    this.setPhase(type);
    window.clearInterval(this.timer);
    window.clearTimeout(this.watchdog);
    if (this.socket) { var socket = this.socket; this.socket = null; socket.close(); }
    this.swap(0);
  };

  /* Replace the card in place with the server-rendered outcome (the same fragment a reload shows). */
  ProgressCard.prototype.swap = function (attempt) {
    var self = this;
    fetchFragment(this.el.getAttribute("data-outcome-url")).then(function (node) {
      self.el.replaceWith(node);
      attach(node.parentNode || document);
    }, function () {
      if (attempt < 4) {
        window.setTimeout(function () { self.swap(attempt + 1); }, 1000 * (attempt + 1));
      } else {
        self.role("connection").textContent = U.t("load_failed");
        self.role("connection").hidden = false;
      }
    });
  };

  function summariseArgs(args) {
    if (!args || typeof args !== "object") return "";
    var parts = Object.keys(args).map(function (key) {
      var value = typeof args[key] === "string" ? args[key] : JSON.stringify(args[key]);
      return key + ": " + value;
    });
    var text = parts.join(", ");
    return text.length > 120 ? text.slice(0, 119) + "…" : text;
  }

  /* GET an HTML fragment and return its first element. */
  function fetchFragment(url) {
    return fetch(url, { credentials: "same-origin", headers: { "X-Requested-With": "fetch" } }).then(function (response) {
      if (!response.ok) throw new Error("HTTP " + response.status);
      return response.text();
    }).then(function (html) {
      var template = document.createElement("template");
      template.innerHTML = html.trim();
      var node = template.content.firstElementChild;
      if (!node) throw new Error("empty fragment");
      return node;
    });
  }

  function attach(root) {
    (root || document).querySelectorAll(".dr-card[data-task]").forEach(function (el) {
      if (!el.uedu) el.uedu = new ProgressCard(el);
    });
  }

  /* ---------------------------------------------------------------- answer behaviours */

  function openCitation(hash) {
    if (!/^#cite-[0-9a-f]+-\d+$/.test(hash || "")) return;
    var entry = document.getElementById(hash.slice(1));
    var details = entry && entry.querySelector("details");
    if (details) details.open = true;
  }

  document.addEventListener("click", function (event) {
    var target = event.target.closest("a[href^='#cite-'], [data-action='acknowledge'], [data-action='copy-link'], [data-action^='feedback-']");
    if (!target) return;
    if (target.matches("[data-action^='feedback-']")) {
      feedbackClick(target);
      return;
    }
    if (target.matches("a[href^='#cite-']")) {
      openCitation(target.getAttribute("href")); // before the browser scrolls to it
      return;
    }
    if (target.matches("[data-action='acknowledge']")) {
      target.disabled = true;
      U.request("POST", target.getAttribute("data-url")).then(function (result) {
        if (result.ok) {
          var done = document.createElement("span");
          done.className = "ack-done small";
          done.textContent = target.getAttribute("data-done");
          target.replaceWith(done);
        } else {
          target.disabled = false;
          target.title = U.errorMessage(result);
        }
      }, function () { target.disabled = false; });
      return;
    }
    if (target.matches("[data-action='copy-link']")) {
      var status = document.querySelector('[data-role="copy-status"]');
      var show = function (key) { if (status) status.textContent = U.t(key); };
      navigator.clipboard.writeText(target.getAttribute("data-url")).then(function () { show("copied"); }, function () { show("copy_failed"); });
    }
  });

  /* Answer feedback: useful / not useful, a reported problem, "this source does not say this".
     Each goes to POST /api/deep_research/task/<uuid>/feedback; the server decides what is valid. */

  function feedbackBox(el) {
    var answer = el.closest(".dr-answer");
    return answer && answer.querySelector(".feedback");
  }

  function sendFeedback(box, payload) {
    return U.request("POST", box.getAttribute("data-feedback-url"), payload);
  }

  function feedbackStatus(box, text) {
    box.querySelector('[data-role="feedback-status"]').textContent = text;
  }

  function openReport(box, notUseful) {
    var form = box.querySelector('[data-role="feedback-form"]');
    form.hidden = false;
    form.setAttribute("data-useful", notUseful ? "false" : "");
    box.querySelector('[data-role="feedback-form-title"]').textContent = U.t(notUseful ? "feedback.not_useful_title" : "feedback.report_title");
    box.querySelector('[data-action="feedback-not-useful"]').setAttribute("aria-expanded", notUseful ? "true" : "false");
    box.querySelector('[data-action="feedback-report"]').setAttribute("aria-expanded", notUseful ? "false" : "true");
    feedbackStatus(box, "");
    form.querySelector("select").focus();
  }

  function closeReport(box) {
    var form = box.querySelector('[data-role="feedback-form"]');
    form.hidden = true;
    box.querySelectorAll("[aria-expanded]").forEach(function (b) { b.setAttribute("aria-expanded", "false"); });
  }

  function rated(box, useful) {
    box.querySelectorAll('[data-action="feedback-useful"], [data-action="feedback-not-useful"]').forEach(function (b) { b.disabled = true; });
    box.querySelector(useful ? '[data-action="feedback-useful"]' : '[data-action="feedback-not-useful"]').classList.add("chosen");
  }

  function feedbackClick(target) {
    var box = feedbackBox(target);
    if (!box) return;
    var action = target.getAttribute("data-action");
    if (action === "feedback-not-useful") { openReport(box, true); return; }
    if (action === "feedback-report") { openReport(box, false); return; }
    if (action === "feedback-close") { closeReport(box); return; }
    target.disabled = true;
    if (action === "feedback-useful") {
      sendFeedback(box, { useful: true }).then(function (result) {
        if (result.ok) {
          rated(box, true);
          feedbackStatus(box, U.t("feedback.thanks"));
        } else {
          target.disabled = false;
          feedbackStatus(box, U.errorMessage(result));
        }
      }, function () { target.disabled = false; feedbackStatus(box, U.t("network_error")); });
    } else if (action === "feedback-citation") {
      var number = Number(target.getAttribute("data-citation"));
      var said = target.parentNode.querySelector(".error");
      if (said) said.remove(); // a previous attempt's message
      var note = document.createElement("span");
      note.setAttribute("role", "status");
      sendFeedback(box, { reason: "source_does_not_say", citation_number: number }).then(function (result) {
        if (result.ok) {
          note.className = "small reported";
          note.textContent = U.t("feedback.reported_citation");
          target.replaceWith(note);
        } else {
          target.disabled = false;
          note.className = "small error";
          note.textContent = " " + U.errorMessage(result);
          target.after(note);
        }
      }, function () {
        target.disabled = false;
        note.className = "small error";
        note.textContent = " " + U.t("network_error");
        target.after(note);
      });
    }
  }

  document.addEventListener("submit", function (event) {
    var form = event.target.closest('[data-role="feedback-form"]');
    if (!form) return;
    event.preventDefault();
    var box = feedbackBox(form);
    var notUseful = form.getAttribute("data-useful") === "false";
    var payload = { reason: form.elements.reason.value, note: form.elements.note.value };
    if (notUseful) payload.useful = false;
    var send = form.querySelector('[type="submit"]');
    send.disabled = true;
    sendFeedback(box, payload).then(function (result) {
      send.disabled = false;
      if (result.ok) {
        form.reset();
        closeReport(box);
        if (notUseful) rated(box, false);
        feedbackStatus(box, U.t("feedback.thanks"));
      } else {
        feedbackStatus(box, U.errorMessage(result)); // the form stays open with what was typed
      }
    }, function () { send.disabled = false; feedbackStatus(box, U.t("network_error")); });
  });

  // The copy button needs the Clipboard API; without it the link field stays the way to copy.
  if (navigator.clipboard) {
    document.querySelectorAll("[data-action='copy-link']").forEach(function (button) { button.hidden = false; });
  }

  window.UeduResearch = { attach: attach, fetchFragment: fetchFragment };
  attach(document);
  // A link from elsewhere (the feedback page, a shared "#cite-…" address) opens the cited entry.
  openCitation(window.location.hash);
})();
