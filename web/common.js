// What the pages under /ui share. Nothing here is trusted: the server
// verifies the token on every call.

// The claims of a JSON Web Token, for display only.
function claims(t) {
  try {
    const b64 = t.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
    return JSON.parse(new TextDecoder().decode(Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))));
  } catch { return {}; }
}

// JSON request headers, with the bearer token when there is one.
function headers(token) {
  const h = { "content-type": "application/json" };
  if (token) h.authorization = "Bearer " + token;
  return h;
}

// The error a failed response carries (the platform's `detail`, mnemo's routes' `error`).
async function failure(res) {
  const data = await res.json().catch(() => null);
  return new Error((data && (data.detail || data.error || data.message)) || `${res.status} ${res.statusText}`);
}

// A JSON call with ``token``: the answer (null for 204), or the response's error thrown.
async function api(method, path, body, token) {
  const res = await fetch(path, { method, headers: headers(token),
                                  body: body === undefined ? undefined : JSON.stringify(body) });
  if (!res.ok) throw await failure(res);
  return res.status === 204 ? null : res.json();
}
