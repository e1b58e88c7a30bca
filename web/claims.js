// The claims of a JSON Web Token, for display only (shared by the pages under /ui):
// the server verifies the token on every call, so nothing here is trusted.
function claims(t) {
  try {
    const b64 = t.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
    return JSON.parse(new TextDecoder().decode(Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))));
  } catch { return {}; }
}
