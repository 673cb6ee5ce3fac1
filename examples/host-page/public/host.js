// The host page's half of the token refresh protocol (plain browser JavaScript, no build step).
// The frame asks with [TOKEN_REFRESH]; this page asks its own server, which calls POST /ai_agent/refresh_token
// with the refresh token it keeps, and answers the frame with the new access token only.
(() => {
  var frame = document.getElementById("aiagent-chat");
  var frameOrigin = new URL(frame.src).origin;
  var refreshing = null;

  function newAccessToken() {
    // One request at a time, whatever the number of questions.
    refreshing =
      refreshing ||
      fetch("/aiagent/refresh", {
        method: "POST",
        credentials: "same-origin",
        headers: { "x-requested-with": "aiagent-host" },
      })
        .then((res) => (res.ok ? res.json() : null))
        .then((body) => (body && typeof body.access_token === "string" ? body.access_token : null))
        .catch(() => null)
        .finally(() => {
          refreshing = null;
        });
    return refreshing;
  }

  window.addEventListener("message", (event) => {
    // Only the chat frame, from the chat's origin, may ask.
    if (event.source !== frame.contentWindow || event.origin !== frameOrigin) return;
    if (event.data?.type !== "[TOKEN_REFRESH]") return;
    newAccessToken().then((accessToken) => {
      // No answer when the server could not refresh: the frame then shows that the session has expired.
      if (!accessToken) return;
      frame.contentWindow.postMessage({ type: "[TOKEN_REFRESH_RESPONSE]", access_token: accessToken }, frameOrigin);
    });
  });
})();
