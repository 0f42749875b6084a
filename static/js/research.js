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
    this.connect();
  }

  ProgressCard.prototype.role = function (name) {
    return this.el.querySelector('[data-role="' + name + '"]');
  };

  ProgressCard.prototype.tick = function () {
    if (isNaN(this.created)) return;
    var seconds = Math.max(0, Math.round((Date.now() - this.created) / 1000));
    var m = Math.floor(seconds / 60), s = seconds % 60;
    this.role("elapsed").textContent = m + ":" + (s < 10 ? "0" : "") + s;
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
    socket.onclose = function () {
      self.el.removeAttribute("data-connected");
      window.clearTimeout(self.watchdog);
      if (self.socket === socket && !self.done) self.reconnect();
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
      case "status_change": if (data.to === "running") this.setPhase("planning"); break;
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

  ProgressCard.prototype.showPlan = function (data) {
    var list = this.role("subquestions");
    list.textContent = "";
    (data.sub_questions || []).forEach(function (question) {
      var item = document.createElement("li");
      item.textContent = question;
      list.appendChild(item);
    });
    this.role("plan").hidden = !list.children.length;
    var limits = data.limits || {};
    if (limits.max_steps) {
      this.role("max-steps").textContent = limits.max_steps;
      this.role("progress").max = limits.max_steps;
    }
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

  document.addEventListener("click", function (event) {
    var target = event.target.closest("a[href^='#cite-'], [data-action='acknowledge'], [data-action='copy-link']");
    if (!target) return;
    if (target.matches("a[href^='#cite-']")) {
      // Open the cited entry before the browser scrolls to it.
      var entry = document.getElementById((target.getAttribute("href") || "").slice(1));
      var details = entry && entry.querySelector("details");
      if (details) details.open = true;
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

  // The copy button needs the Clipboard API; without it the link field stays the way to copy.
  if (navigator.clipboard) {
    document.querySelectorAll("[data-action='copy-link']").forEach(function (button) { button.hidden = false; });
  }

  window.UeduResearch = { attach: attach, fetchFragment: fetchFragment };
  attach(document);
})();
