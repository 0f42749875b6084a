/* The live path of one research's events: the Channels WebSocket /ws/deep_research/<uuid>/,
   resumed after the last seq seen. A dropped or silent socket is reopened with exponential
   back-off; before each reopening the events missed are caught up over HTTP (…/events?after=seq),
   so progress shows even where WebSockets are blocked. Each event reaches onEvent once, in order.
   The back-off grows until the server sends something (one that accepts and closes at once, as
   an overloaded one may, is not asked again every half second); it ends with the terminal event.
   UeduStream.open({uuid, eventsUrl, onEvent, onState}) → {close()}; onState(connected) on each change. */
(function () {
  "use strict";
  var IDLE_MS = 45000; // the server sends a heartbeat every 15 s; silence this long means a dead socket
  var NOT_EVENTS = { connected: true, heartbeat: true };
  var TERMINAL = { completed: true, failed: true, cancelled: true };

  function open(options) {
    var lastSeq = 0, attempts = 0, socket = null, watchdog = null, closed = false, finished = false;

    function deliver(event) {
      if (!event || !event.type || NOT_EVENTS[event.type]) return;
      if (typeof event.seq === "number") {
        if (event.seq <= lastSeq) return; // already delivered (replay after a reconnect)
        lastSeq = event.seq;
      }
      if (TERMINAL[event.type]) finished = true; // nothing follows it: no need to reconnect
      options.onEvent(event);
    }

    function connect() {
      var current, scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
      var quiet = function () { window.clearTimeout(watchdog); watchdog = window.setTimeout(function () { current.close(); }, IDLE_MS); };
      try {
        socket = current = new WebSocket(scheme + window.location.host + "/ws/deep_research/" + options.uuid + "/?last_seq=" + lastSeq);
      } catch (e) { return reconnect(); }
      current.onopen = function () { options.onState(true); quiet(); };
      current.onmessage = function (message) {
        var event = null;
        attempts = 0; // the server speaks: the next drop is retried soon again
        quiet();
        try { event = JSON.parse(message.data); } catch (e) { /* not an event */ }
        deliver(event);
      };
      current.onclose = function (closing) {
        window.clearTimeout(watchdog);
        if (socket !== current || closed || finished) return;
        options.onState(false);
        // 4403: the server says this user may no longer see the research; asking again cannot help.
        if (closing && closing.code === 4403) return;
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
        }, function () {}).then(function () { if (!closed && !finished) connect(); });
      }, Math.min(10000, 500 * Math.pow(2, attempts - 1)));
    }

    connect();
    return {
      close: function () {
        closed = true;
        window.clearTimeout(watchdog);
        if (socket) socket.close();
      },
    };
  }

  window.UeduStream = { open: open };
})();
