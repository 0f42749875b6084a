/* The live progress card of a research: reduces the event stream (static/js/stream.js) into the
   card's meters, plan and tool calls; cancels on request; when the research ends, swaps the card
   for the server-rendered outcome (the same fragment a reload shows) and, if the student is in
   another tab, says so with the browser's notification. The plan editor is static/js/plan_review.js. */
(function () {
  "use strict";
  var U = window.Uedu;

  function summariseArgs(args) {
    if (!args || typeof args !== "object") return "";
    var text = Object.keys(args).map(function (key) {
      return key + ": " + (typeof args[key] === "string" ? args[key] : JSON.stringify(args[key]));
    }).join(", ");
    return text.length > 120 ? text.slice(0, 119) + "…" : text;
  }

  function ProgressCard(el) {
    this.el = el;
    this.created = Date.parse(el.getAttribute("data-created"));
    this.plan = window.UeduPlanReview.attach(this);
    this.timer = window.setInterval(this.tick.bind(this), 1000);
    this.tick();
    var cancel = el.querySelector('[data-action="cancel"]');
    if (cancel) cancel.addEventListener("click", this.cancel.bind(this, cancel));
    this.stream = window.UeduStream.open({
      uuid: el.getAttribute("data-task"), eventsUrl: el.getAttribute("data-events-url"), onEvent: this.handle.bind(this),
      onState: function (connected) {
        if (connected) el.setAttribute("data-connected", "true");
        else el.removeAttribute("data-connected");
        this.show("connection", U.t("reconnecting"), !connected);
      }.bind(this),
    });
  }

  ProgressCard.prototype.role = function (name) {
    return this.el.querySelector('[data-role="' + name + '"]');
  };

  /* Set a part's text (and show or hide it). */
  ProgressCard.prototype.show = function (name, text, visible) {
    this.role(name).textContent = text;
    if (visible !== undefined) this.role(name).hidden = !visible;
  };

  ProgressCard.prototype.tick = function () {
    this.plan.tick();
    if (!isNaN(this.created)) this.show("elapsed", U.clock(Math.max(0, Math.round((Date.now() - this.created) / 1000))));
  };

  /* The step meter appears once the plan has set the budget (the hard limit is not what this
     research may use), and shows "Steps n" without a total if a research goes past it. */
  ProgressCard.prototype.setBudget = function (steps) {
    this.budget = steps;
    this.role("progress").max = steps;
    this.show("max-steps", steps);
    this.role("steps-meter").hidden = this.role("progress").hidden = false;
  };

  ProgressCard.prototype.showStep = function (round) {
    this.show("steps", round);
    this.role("steps-meter").hidden = false;
    this.role("steps-of").hidden = !this.budget || round > this.budget;
    this.role("progress").value = Math.min(round, this.budget || 0);
  };

  ProgressCard.prototype.setPhase = function (key, params) {
    this.role("phase").textContent = U.t("phase." + key, params);
    this.el.setAttribute("data-phase", key);
  };

  /* The reducer: what each event of the stream does to the card beyond the phase its declaration
     names (agent/engine/events.py: `phase`, sent in the ui strings as event_phase). */
  var ON = {
    status_change: function (data) {
      if (data.to === "awaiting_plan_review") this.plan.open(data);
      else if (data.from === "awaiting_plan_review") this.plan.close(data);
      else if (data.to === "running") this.setPhase("planning");
    },
    plan_complete: function (data) {
      var limits = data.limits || {}, label = U.t("complexity." + data.complexity);
      this.listSubquestions(data.sub_questions);
      if (limits.max_steps) this.setBudget(limits.max_steps);
      // The planner's complexity sets the research's budgets (agent.engine.types.DEFAULT_BUDGETS).
      this.show("max-tool-calls", limits.max_tool_calls || "");
      this.role("tool-budget").hidden = !limits.max_tool_calls;
      this.show("complexity", label === "complexity." + data.complexity ? data.complexity || "" : label);
      this.role("complexity-box").hidden = !data.complexity;
      this.setPhase("researching", { round: 1 });
    },
    action_thinking: function (data) {
      this.showStep(data.round);
      this.setPhase("researching", { round: data.round });
    },
    action_dispatch: function (data) {
      (data.calls || []).forEach(function (call) {
        var item = this.role("step-list").appendChild(U.row(this.el, "step-row"));
        item.setAttribute("data-index", call.index);
        item.querySelector("code").textContent = call.tool;
        item.querySelector(".step-args").textContent = summariseArgs(call.args);
      }, this);
      this.role("steps-box").hidden = !this.role("step-list").children.length;
      if (typeof data.tool_calls_used === "number") this.show("tool-calls", data.tool_calls_used);
      this.setPhase("calling");
    },
    action_complete: function (data) {
      var item = this.role("step-list").querySelector('[data-index="' + data.index + '"]');
      if (!item) return;
      item.className = "step status-" + data.status;
      item.querySelector(".step-status").textContent = U.t("step_status." + data.status);
      item.querySelector(".step-duration").textContent = (data.duration_ms / 1000).toFixed(1) + " s";
      if (data.error) item.title = data.error;
    },
    reflection_done: function (data) { this.setPhase(data.sufficient ? "selecting" : "reflecting"); },
    limit_hit: function (data) {
      this.show("limit", U.t("limit_hit", { reason: U.t("limit_reason." + data.reason) }), true);
      this.setPhase("selecting");
    },
  };
  // Never reach the card: the stream (static/js/stream.js) handles them itself.
  var STREAM_ONLY = ["connected", "heartbeat"];
  ["completed", "failed", "cancelled"].forEach(function (type) { ON[type] = function () { this.finish(type); }; });

  ProgressCard.prototype.handle = function (event) {
    var data = event.data || {};
    if (event.seq) this.el.setAttribute("data-last-seq", String(event.seq));
    if (typeof data.tokens_used === "number") this.show("tokens", data.tokens_used.toLocaleString());
    if (STREAM_ONLY.indexOf(event.type) >= 0) return;
    if (ON.hasOwnProperty(event.type)) ON[event.type].call(this, data);
    else {
      var key = "event_phase." + event.type, phase = U.t(key);
      if (phase !== key) this.setPhase(phase); // t() answers a key it does not hold with the key
    }
    this.role("phase").title = U.t("event." + event.type);
  };

  // The plan's sub-questions as the card lists them (planned, then as actually researched).
  ProgressCard.prototype.listSubquestions = function (questions) {
    var list = this.role("subquestions");
    list.textContent = "";
    (questions || []).forEach(function (question) { list.appendChild(document.createElement("li")).textContent = question; });
    this.role("plan").hidden = !list.children.length;
  };

  ProgressCard.prototype.cancel = function (button) {
    this.show("phase", U.t("cancelling"));
    U.act(button, "POST", this.el.getAttribute("data-cancel-url"), { task_uuid: this.el.getAttribute("data-task") }).then(function (result) {
      if (result.status === 409) button.disabled = true; // it ended meanwhile: its outcome is on the way
      else if (!result.ok) this.show("phase", result.status ? U.t("cancel_failed", { message: result.message }) : result.message);
    }.bind(this));
  };

  ProgressCard.prototype.finish = function (type) {
    if (this.done) return;
    this.done = true;
    this.setPhase(type);
    window.clearInterval(this.timer);
    this.stream.close();
    if (document.hidden && this.el.getAttribute("data-owner") === "true") notify(type, this.el.getAttribute("data-question"));
    U.fragment(this.el.getAttribute("data-outcome-url"), 4).then(function (node) {
      var watched = U.inView(this.el);
      this.el.replaceWith(node);
      // The page decides whether to scroll to it (chat.js: the channel page's "new answer" pill).
      node.dispatchEvent(new CustomEvent("uedu:outcome", { bubbles: true, detail: { watched: watched } }));
      window.htmx.process(node); // the answer's feedback and acknowledgement are htmx fragments
      attach(node.parentNode || document);
    }.bind(this), function () { this.show("connection", U.t("load_failed"), true); }.bind(this));
  };

  /* The browser's notification that a research ended, for a student who went to another tab.
     Permission is asked when the student starts a research (askToNotify, on that click). */
  function notify(type, question) {
    if (!window.Notification || Notification.permission !== "granted") return;
    new Notification(U.t("notify." + type), { body: question || "", tag: "uedu-research" }).onclick = function () { window.focus(); this.close(); };
  }

  function askToNotify() {
    if (window.Notification && Notification.permission === "default") Notification.requestPermission();
  }

  function attach(root) {
    (root || document).querySelectorAll(".dr-card[data-task]").forEach(function (el) {
      if (!el.uedu) el.uedu = new ProgressCard(el);
    });
  }

  window.UeduResearch = { attach: attach, askToNotify: askToNotify };
  attach(document);
})();
