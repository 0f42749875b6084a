/* Shared helpers for every page: translated strings, JSON requests, the one "disable → request →
   show the message" step, HTML fragments with retry, the message when an htmx request fails. No UI
   text lives here: the server renders translated strings into a JSON data block (#ui-strings). */
(function () {
  "use strict";
  document.documentElement.classList.add("js");
  var stringsCache = null;

  /* t("phase.planning") or t("review.limit", {max: 6}) */
  function t(key, params) {
    if (stringsCache === null) {
      var node = document.getElementById("ui-strings");
      stringsCache = node ? JSON.parse(node.textContent) : {};
    }
    var value = key.split(".").reduce(function (obj, part) { return obj && obj[part]; }, stringsCache);
    if (typeof value !== "string") return key;
    return value.replace(/%\((\w+)\)s/g, function (_, name) { return params && params[name] !== undefined ? String(params[name]) : ""; });
  }

  /* GET/POST (JSON or FormData) returning {ok, status, data}; never throws for HTTP errors, only for network ones. */
  function request(method, url, body) {
    var csrf = document.querySelector('meta[name="csrf-token"]');
    var init = { method: method, credentials: "same-origin", headers: { "Accept": "application/json", "X-CSRFToken": csrf ? csrf.content : "", "X-Requested-With": "fetch" } };
    if (body instanceof FormData) init.body = body;
    else if (body !== undefined) { init.headers["Content-Type"] = "application/json"; init.body = JSON.stringify(body); }
    return fetch(url, init).then(function (response) {
      var type = response.headers.get("Content-Type") || "";
      var read = type.indexOf("application/json") >= 0 ? response.json() : response.text();
      return read.then(function (data) { return { ok: response.ok, status: response.status, data: data, html: type.indexOf("text/html") >= 0 }; });
    });
  }

  /* The one way a control talks to the API: disabled while the request runs, enabled again if it
     failed; resolves to {ok, status, data, message} where message is the API's own words or the
     network error. */
  function act(control, method, url, body) {
    control.disabled = true;
    return request(method, url, body).then(function (result) {
      var error = result.data && result.data.error;
      if (!result.ok) control.disabled = false;
      result.message = result.ok ? "" : (error && error.message) || t("network_error");
      return result;
    }, function () {
      control.disabled = false;
      return { ok: false, status: 0, data: null, message: t("network_error") };
    });
  }

  /* Whether any of the element shows between the top of the window and the top of the sticky
     composer (the channel page's), i.e. where the reader can see it. */
  function inView(el) {
    var box = el.getBoundingClientRect(), composer = document.getElementById("composer");
    var bottom = composer ? composer.getBoundingClientRect().top : window.innerHeight;
    return box.bottom > 0 && box.top < bottom;
  }

  /* An HTML fragment's first element, from its markup. */
  function parse(html) {
    var template = document.createElement("template");
    template.innerHTML = html.trim();
    return template.content.firstElementChild;
  }

  /* GET a server-rendered fragment, retrying `tries` times a second apart. */
  function fragment(url, tries) {
    return request("GET", url).then(function (result) {
      var node = result.ok && parse(result.data);
      if (!node) throw new Error("HTTP " + result.status);
      return node;
    }).catch(function (error) {
      if (!tries) throw error;
      return new Promise(function (resolve) { window.setTimeout(resolve, 1000); }).then(function () { return fragment(url, tries - 1); });
    });
  }

  /* "m:ss" of a number of seconds (the card's elapsed time, the plan review's countdown). */
  function clock(seconds) {
    return Math.floor(seconds / 60) + ":" + ("0" + (seconds % 60)).slice(-2);
  }

  /* A fresh copy of a <template data-role="…"> inside root (the page renders translated rows). */
  function row(root, name) {
    return root.querySelector('template[data-role="' + name + '"]').content.firstElementChild.cloneNode(true);
  }

  /* An htmx request that got no fragment (network down, a server error): its control is enabled
     again and says so beside it, until it is tried again. A poll (the Bloom badge) just stops. */
  function failed(event) {
    var control = event.detail.elt;
    if (control.hasAttribute("hx-trigger")) return;
    control.insertAdjacentElement("afterend", parse('<span class="small error" role="status" data-htmx-error></span>')).textContent = " " + t("network_error");
  }
  document.addEventListener("htmx:sendError", failed);
  document.addEventListener("htmx:responseError", failed);
  document.addEventListener("htmx:beforeRequest", function (event) {
    var said = event.detail.elt.nextElementSibling;
    if (said && said.hasAttribute("data-htmx-error")) said.remove();
  });

  /* Forms marked data-autosubmit (the language switch) submit when a select changes. */
  document.addEventListener("change", function (event) {
    var form = event.target.form;
    if (form && form.hasAttribute("data-autosubmit")) form.submit();
  });

  /* Forms marked data-confirm (deleting a material) ask first; the question is the attribute's
     text, rendered translated by the page. An inline onsubmit would be refused by the CSP. */
  document.addEventListener("submit", function (event) {
    var question = event.target.getAttribute && event.target.getAttribute("data-confirm");
    if (question && !window.confirm(question)) event.preventDefault();
  });

  // A skip link focuses its target (following the link only scrolls to it).
  document.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest(".skip-link"), target = link && document.querySelector(link.getAttribute("href"));
    if (target) { event.preventDefault(); target.focus(); }
  });

  window.Uedu = { t: t, request: request, act: act, parse: parse, fragment: fragment, clock: clock, row: row, inView: inView };
})();
