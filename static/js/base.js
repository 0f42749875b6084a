/* Shared helpers for every page: CSRF, translated strings, JSON requests. No UI text lives here:
   the server renders translated strings into a JSON data block (#ui-strings). */
(function () {
  "use strict";
  document.documentElement.classList.add("js");

  var stringsCache = null;

  function strings() {
    if (stringsCache === null) {
      var node = document.getElementById("ui-strings");
      stringsCache = node ? JSON.parse(node.textContent) : {};
    }
    return stringsCache;
  }

  /* t("phase.planning") or t("quota_left", {remaining: 3, limit: 20}) */
  function t(key, params) {
    var value = key.split(".").reduce(function (obj, part) { return obj && obj[part]; }, strings());
    if (typeof value !== "string") return key;
    return value.replace(/%\((\w+)\)s/g, function (_, name) {
      return params && params[name] !== undefined ? String(params[name]) : "";
    });
  }

  function csrfToken() {
    var meta = document.querySelector('meta[name="csrf-token"]');
    return meta ? meta.getAttribute("content") : "";
  }

  /* POST/GET returning {ok, status, data}; never throws for HTTP errors, only for network ones. */
  function request(method, url, body, extraHeaders) {
    var headers = { "Accept": "application/json", "X-CSRFToken": csrfToken() };
    var init = { method: method, headers: headers, credentials: "same-origin" };
    if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    Object.keys(extraHeaders || {}).forEach(function (k) { headers[k] = extraHeaders[k]; });
    return fetch(url, init).then(function (response) {
      var type = response.headers.get("Content-Type") || "";
      var read = type.indexOf("application/json") >= 0 ? response.json() : response.text();
      return read.then(function (data) { return { ok: response.ok, status: response.status, data: data }; });
    });
  }

  function errorMessage(result) {
    if (result && result.data && result.data.error && result.data.error.message) return result.data.error.message;
    return t("network_error");
  }

  /* Forms marked data-autosubmit (the language switch) submit when a select changes. */
  document.addEventListener("change", function (event) {
    var form = event.target.form;
    if (form && form.hasAttribute("data-autosubmit")) form.submit();
  });

  window.Uedu = { t: t, csrfToken: csrfToken, request: request, errorMessage: errorMessage };
})();
