/* The live path of one research's events: the Channels WebSocket /ws/deep_research/<uuid>/,
   resumed after the last seq seen. A dropped or silent socket is reopened with exponential
   back-off; before each reopening the events missed are caught up over HTTP (…/events?after=seq),
   so progress shows even where WebSockets are blocked. Each event reaches onEvent once, in order.
   UeduStream.open({uuid, eventsUrl, onEvent, onState}) → {close(), lastSeq()}; onState(connected). */
(function () {
  "use strict";
  var IDLE_MS = 45000; // the server sends a heartbeat every 15 s; silence this long means a dead socket
  var NOT_EVENTS = { connected: true, heartbeat: true };

  function open(options) {
    var lastSeq = 0, attempts = 0, socket = null, watchdog = null, closed = false;

    function deliver(event) {
      if (!event || !event.type || NOT_EVENTS[event.type]) return;
      if (event.seq !== null && event.seq !== undefined) {
        if (event.seq <= lastSeq) return; // already delivered (replay after a reconnect)
        lastSeq = event.seq;
      }
      options.onEvent(event);
    }

    function resetWatchdog(current) {
      window.clearTimeout(watchdog);
      watchdog = window.setTimeout(function () { current.close(); }, IDLE_MS);
    }

    function connect() {
      var scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
      var current;
      try {
        current = new WebSocket(scheme + window.location.host + "/ws/deep_research/" + options.uuid + "/?last_seq=" + lastSeq);
      } catch (e) { reconnect(); return; }
      socket = current;
      current.onopen = function () { attempts = 0; options.onState(true); resetWatchdog(current); };
      current.onmessage = function (message) {
        resetWatchdog(current);
        try { deliver(JSON.parse(message.data)); } catch (e) { /* not an event */ }
      };
      current.onclose = function () {
        window.clearTimeout(watchdog);
        if (socket !== current || closed) return;
        options.onState(false);
        reconnect();
      };
    }

    function reconnect() {
      socket = null;
      attempts += 1;
      window.setTimeout(function () {
        if (closed) return;
        window.Uedu.request("GET", options.eventsUrl + "?after=" + lastSeq).then(function (result) {
          if (result.ok && Array.isArray(result.data)) result.data.forEach(deliver);
        }, function () {}).then(function () { if (!closed) connect(); });
      }, Math.min(10000, 500 * Math.pow(2, attempts - 1)));
    }

    connect();
    return {
      lastSeq: function () { return lastSeq; },
      close: function () {
        closed = true;
        window.clearTimeout(watchdog);
        if (socket) socket.close();
        socket = null;
      },
    };
  }

  window.UeduStream = { open: open };
})();
