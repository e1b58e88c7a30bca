"""A local OpenAI-compatible chat server for end-to-end tests (test code only).

It speaks ``POST /v1/chat/completions`` (plain and ``stream: true``, a text
answer then streamed word by word) the way an
OpenAI-compatible endpoint does, so mnemo's production path (``init_chat_model``
-> ``langchain-openai`` -> ``OPENAI_BASE_URL``) runs unchanged against it.

* When the request offers the ``MemoryExtraction`` function, it answers with a
  call of it, filled from the prompt by two regular expressions ("I'm X",
  "I live in Y").
* When the user's last message mentions a refund, it calls ``search_policy``
  and then answers with the start of the tool's result.
* "Remember that <fact>", "What do you remember about <topic>?" and
  "Forget that <fact>" in the user's last message make it call
  ``remember_note``, ``recall_notes`` and ``forget_note``, as a real model
  asked to would; "Remember that <fact>" calls ``upsert_memory`` (the tool of
  LangChain's memory-agent template, ``content`` the fact, ``context`` the
  message) when that is the tool offered instead.
* "Feedback for me: <text>" / "Feedback for everyone: <text>" make it call
  ``improve_instructions`` with that scope; asked for an ``InstructionRewrite``,
  it answers as a model following the rewrite's rules would: the feedback up
  to its first parenthesis (where the tests put the author's personal data),
  as one sentence.
* A user message containing "rendezvous" is held until a second such request
  arrives (or 30 s pass): the answer is "together" when two runs were in
  flight at once, "alone" when they were not, so a test can tell concurrent
  runs from queued ones without measuring time.
* A user message containing "linger" is held until ``POST /release`` (or
  60 s): a run that stays in progress as long as a test needs.
* "... the past case ..." in the user's last message makes it answer with
  the first fenced block a past case in its system prompt holds (quoted, as
  the prompt quotes every case), as a small model copying its example would.
* "Tidy up my notes about <topic>" makes it call ``forget_note`` though nobody
  said forget, as a model deciding by itself would; "yes" repeats the last
  ``forget_note`` call of the conversation (a model asked to confirm).
* A user message containing "dawdle" is answered as usual (a "Remember
  that ..." calls ``remember_note``), but the answer after a tool's result is
  held until ``POST /release`` (or 60 s): a run in its reply, after the tool ran.
* Otherwise it answers ``"ok"``.

Every request body is kept; ``GET /requests`` returns them, so a test can see
the exact prompt the model received.

Profiles (``StubServer(profile=...)``, ``stub.profile = ...``, or
``python -m harness.stub_openai [port] [profile]``) give it the measured
behaviour of servers users run (issue 29); the default is the above:

* ``llamacpp``: llama.cpp's ``llama-server --jinja``. A named ``tool_choice``
  or ``"required"`` is ignored: the answer is text, no call. A
  ``response_format`` ``json_schema`` is enforced: the answer is JSON of that
  schema (the extraction's fields as above, a rewrite, empty lists otherwise).
  Tools offered without a forced choice are called as by default.
* ``nostructured``: no structured output at all: ``response_format`` and
  tools are ignored, every answer is text ("ok").
* ``textcalls``: a model whose tool calls come back as text, as
  Qwen2.5-Coder-1.5B's did on llama-server (issue 42): every call it would
  make (but a structured answer's) is the answer's content, a fenced JSON
  block ``{"name", "arguments"}``, with no ``tool_calls``.
* ``looping``: a model that never stops: it repeats a word, one every
  :data:`LOOP_DELAY_S`, until the request's ``max_tokens`` (or
  ``max_completion_tokens``), then ends with ``finish_reason: "length"``; a
  request without a cap is answered never.
"""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CITY = re.compile(r"(?:live in|住在)\s*([A-Z][a-z]+|[\u4e00-\u9fff]{2})")
NAME = re.compile(r"(?:I'm|I am|(?i:my name is)|我叫)\s*([A-Z][a-z]+|[\u4e00-\u9fff]{2})")
REMEMBER = re.compile(r"remember that (.+?)(?:[.!]|$)", re.IGNORECASE)
RECALL = re.compile(r"what do you remember about (.+?)(?:[.?!]|$)", re.IGNORECASE)
TIDY = re.compile(r"tidy up my notes about (.+?)(?:[.!]|$)", re.IGNORECASE)
FORGET = re.compile(r"forget that (.+?)(?:[.!]|$)", re.IGNORECASE)
FEEDBACK = re.compile(r"feedback for (me|everyone): (.+)", re.IGNORECASE)
QUOTED_FEEDBACK = re.compile(r"<feedback>\n(\".*\")\n</feedback>")
ALLERGY = re.compile(r"(?:I'm|I am) allergic to (\w+)")
ORDER = re.compile(r"order ([A-Z]-?\d+)")

PAST_CASE = re.compile(r'Customer: ("(?:[^"\\]|\\.)*")')
FENCED = re.compile(r"```.*?```", re.DOTALL)
PROFILES = ("default", "llamacpp", "nostructured", "textcalls", "looping")
#: Seconds between two words of the looping model.
LOOP_DELAY_S = 0.05


def _rewrite_args(prompt: str) -> dict:
    m = QUOTED_FEEDBACK.search(prompt)
    said = json.loads(m.group(1)) if m else ""
    sentence = said.split("(")[0].strip().rstrip(".")
    return {"instructions": sentence[:1].upper() + sentence[1:] + ".", "change": "from feedback"}


def _extraction_args(prompt: str) -> dict:
    args: dict = {}
    if m := CITY.search(prompt):
        args["city"] = m.group(1)
    if m := NAME.search(prompt):
        args["name"] = m.group(1)
    if m := ALLERGY.search(prompt):
        args["notes"] = [f"The user is allergic to {m.group(1)}."]
    return args


#: Where a memory call's system prompt starts (extraction, summaries, rewrites of instructions),
#: told apart from the agent's chat calls by harness.devserver and bench.prompt_cache.
MEMORY_WORK = ("You maintain the ", "You maintain long-term memory")


def system_text(body: dict) -> str:
    """The system messages of a chat request, joined in order (the agent's prompt is in
    several: nodes.prompts)."""
    return "\n\n".join(str(m.get("content", "")) for m in body.get("messages", []) if m.get("role") == "system")


def _copied_block(body: dict) -> str | None:
    """The first fenced block of a past case in the request's system messages, unquoted."""
    text = system_text(body)
    for quoted in PAST_CASE.findall(text):
        if m := FENCED.search(json.loads(quoted)):
            return m.group(0)
    return None


def _last_forget(body: dict) -> dict | None:
    """The arguments of the conversation's last ``forget_note`` call."""
    calls = [c for m in body["messages"] if m["role"] == "assistant" for c in m.get("tool_calls") or []]
    forgets = [c for c in calls if c["function"]["name"] == "forget_note"]
    return json.loads(forgets[-1]["function"]["arguments"]) if forgets else None


def _last_user_text(body: dict) -> str:
    return next((str(m.get("content", "")) for m in reversed(body["messages"]) if m["role"] == "user"), "")


def _schema_answer(body: dict, said: str) -> str:
    """What a server enforcing the request's ``json_schema`` answers: JSON of that schema."""
    name = body["response_format"].get("json_schema", {}).get("name", "")
    prompt = "\n".join(str(m.get("content", "")) for m in body["messages"])
    if name == "MemoryExtraction":
        return json.dumps(_extraction_args(prompt))
    if name == "InstructionRewrite":
        return json.dumps(_rewrite_args(said))
    if name == "Consolidation":
        return json.dumps({"merges": [], "contradictions": []})
    return "{}"


class _Handler(BaseHTTPRequestHandler):
    server: StubServer

    def log_message(self, *args):  # keep test output clean
        pass

    def _send_json(self, payload, status=200):
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path.rstrip("/").endswith("/requests"):
            self._send_json(self.server.requests)
        else:
            self._send_json({"error": "not found"}, 404)

    def _tool_call(self, name: str, **args) -> dict:
        call = {
            "id": f"call_{len(self.server.requests)}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)},
        }
        return {"role": "assistant", "content": None, "tool_calls": [call]}

    def do_POST(self):
        length = int(self.headers.get("Content-Length", 0))
        body = json.loads(self.rfile.read(length) or b"{}")
        if self.path.rstrip("/").endswith("/release"):
            self.server.released.set()
            self._send_json({"released": True})
            return
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send_json({"error": {"message": "not found"}}, 404)
            return
        self.server.requests.append(body)
        if self.server.refuse and self.server.refuse in body:
            message = f"unsupported parameter: {self.server.refuse}"
            self._send_json({"error": {"message": message}}, self.server.refuse_status)
            return
        profile = self.server.profile
        if profile == "looping":
            self._loop(body)
            return
        tools = [t["function"]["name"] for t in body.get("tools", [])]
        message: dict = {"role": "assistant", "content": "ok"}
        finish = "stop"
        last = body["messages"][-1]
        said = str(last.get("content", "")) if last["role"] == "user" else ""
        answered = False  # by the profile
        if profile == "nostructured":
            tools = []
        elif profile == "llamacpp" and (body.get("response_format") or {}).get("type") == "json_schema":
            message["content"], answered = self.server.schema_answer or _schema_answer(body, said), True
        elif profile == "llamacpp" and body.get("tool_choice") not in (None, "auto", "none"):
            # "Wrong type supplied for parameter 'tool_choice' ... using default value": a text answer.
            message["content"], answered = "Sure, I will keep that in mind.", True
        if answered:
            pass
        elif "linger" in said:
            self.server.released.wait(60)
            message["content"] = "released"
        elif last["role"] == "tool" and "dawdle" in _last_user_text(body):
            self.server.released.wait(60)
            message["content"] = "released"
        elif "rendezvous" in said:
            try:
                self.server.rendezvous.wait()
                message["content"] = "together"
            except threading.BrokenBarrierError:
                message["content"] = "alone"
        elif "past case" in said and (copied := _copied_block(body)):
            message["content"] = copied
        elif "InstructionRewrite" in tools:
            message, finish = self._tool_call("InstructionRewrite", **_rewrite_args(said)), "tool_calls"
        elif "improve_instructions" in tools and (m := FEEDBACK.search(said)):
            args = {"feedback": m.group(2), "scope": m.group(1).lower()}
            message, finish = self._tool_call("improve_instructions", **args), "tool_calls"
        elif "remember_note" in tools and (m := REMEMBER.search(said)):
            message, finish = self._tool_call("remember_note", text=m.group(1)), "tool_calls"
        elif "upsert_memory" in tools and (m := REMEMBER.search(said)):
            message, finish = self._tool_call("upsert_memory", content=m.group(1), context=said), "tool_calls"
        elif "recall_notes" in tools and (m := RECALL.search(said)):
            message, finish = self._tool_call("recall_notes", query=m.group(1)), "tool_calls"
        elif "forget_note" in tools and (m := FORGET.search(said) or TIDY.search(said)):
            message, finish = self._tool_call("forget_note", about=m.group(1)), "tool_calls"
        elif "forget_note" in tools and said.strip().lower() == "yes" and (held := _last_forget(body)):
            message, finish = self._tool_call("forget_note", **held), "tool_calls"
        elif "lookup_order" in tools and (m := ORDER.search(said)):  # the doctor's check
            message, finish = self._tool_call("lookup_order", order_id=m.group(1)), "tool_calls"
        elif "search_policy" in tools and "refund" in said.lower():
            message, finish = self._tool_call("search_policy", query=said), "tool_calls"
        elif last["role"] == "tool":
            message = {"role": "assistant", "content": "ok: " + str(last.get("content", ""))[:200]}
        elif "MemoryExtraction" in tools:
            prompt = "\n".join(str(m.get("content", "")) for m in body["messages"])
            call = {
                "id": f"call_{len(self.server.requests)}",
                "type": "function",
                "function": {"name": "MemoryExtraction", "arguments": json.dumps(_extraction_args(prompt))},
            }
            message = {"role": "assistant", "content": None, "tool_calls": [call]}
            finish = "tool_calls"
        calls = message.get("tool_calls") or []
        if profile == "textcalls" and calls and calls[0]["function"]["name"] != "MemoryExtraction":
            function = calls[0]["function"]
            block = json.dumps({"name": function["name"], "arguments": json.loads(function["arguments"])})
            message, finish = {"role": "assistant", "content": f"```json\n{block}\n```"}, "stop"
        self._answer(body, message, finish)

    def _loop(self, body: dict) -> None:
        """The looping model: the same word until the request's cap, never without one."""
        cap = body.get("max_tokens") or body.get("max_completion_tokens")
        if not body.get("stream"):
            time.sleep(LOOP_DELAY_S * cap if cap else 3600)
            self._answer(body, {"role": "assistant", "content": "again " * (cap or 0)}, "length")
            return
        base = {"id": f"chatcmpl-{len(self.server.requests)}", "created": int(time.time()), "model": body.get("model")}
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        sent = 0
        try:
            while cap is None or sent < cap:
                delta = {"role": "assistant", "content": "again "} if sent == 0 else {"content": "again "}
                chunk = {**base, "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta}]}
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.flush()
                sent += 1
                time.sleep(LOOP_DELAY_S)
            end = {
                **base,
                "object": "chat.completion.chunk",
                "choices": [{"index": 0, "delta": {}, "finish_reason": "length"}],
            }
            self.wfile.write(f"data: {json.dumps(end)}\n\ndata: [DONE]\n\n".encode())
        except OSError:  # the client gave up (its deadline): the model stops with it
            pass

    def _answer(self, body: dict, message: dict, finish: str) -> None:
        base = {
            "id": f"chatcmpl-{len(self.server.requests)}",
            "created": int(time.time()),
            "model": body.get("model", "stub"),
        }
        if not body.get("stream"):
            self._send_json(
                {
                    **base,
                    "object": "chat.completion",
                    "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                }
            )
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        delta = dict(message)
        if "tool_calls" in delta:
            delta["tool_calls"] = [{**c, "index": 0} for c in delta["tool_calls"]]
        # A text answer arrives word by word, as a real server streams it, so a
        # client can be seen assembling it from several chunks.
        pieces = re.findall(r"\s*\S+\s*|\s+", delta["content"]) if isinstance(delta.get("content"), str) else []
        deltas = [{**delta, "content": pieces[0]}, *({"content": p} for p in pieces[1:])] if pieces else [delta]
        for chunk in (
            *(
                {
                    **base,
                    "object": "chat.completion.chunk",
                    "choices": [{"index": 0, "delta": d, "finish_reason": None}],
                }
                for d in deltas
            ),
            {
                **base,
                "object": "chat.completion.chunk",
                "choices": [{"index": 0, "delta": {}, "finish_reason": finish}],
            },
        ):
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")


class StubServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int = 0, profile: str = "default"):
        super().__init__(("127.0.0.1", port), _Handler)
        if profile not in PROFILES:
            raise ValueError(f"profile is one of {PROFILES}, got {profile!r}")
        self.profile = profile
        #: A request parameter answered with a 400 (a server that does not know it), e.g. "response_format".
        self.refuse: str | None = None
        #: The status of that answer (400: the parameter is not known; a test may give a 401, 429...).
        self.refuse_status = 400
        #: What the ``llamacpp`` profile answers a ``json_schema`` request with instead of its own
        #: JSON (a test's malformed answer).
        self.schema_answer: str | None = None
        self.requests: list[dict] = []
        self.rendezvous = threading.Barrier(2, timeout=30)
        self.released = threading.Event()
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)

    def release(self) -> None:
        """Let every held "linger" request answer."""
        self.released.set()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self.shutdown()
        self.server_close()


if __name__ == "__main__":  # manual use: python -m harness.stub_openai [port] [profile]
    import sys

    port, profile = int(sys.argv[1]) if len(sys.argv) > 1 else 8765, sys.argv[2] if len(sys.argv) > 2 else "default"
    with StubServer(port, profile) as stub:
        print(f"stub OpenAI-compatible server ({profile}) on {stub.base_url}", flush=True)
        threading.Event().wait()
