"""mnemo.core.env: the one reader of the environment, and its parsing."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from mnemo.core import InvalidInputError, env

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("mnemo", "nodes", "graphs", "server", "web")
ENV_MODULE = ROOT / "mnemo" / "core" / "env.py"
#: ``os.environ`` methods that write (for child processes or native runtimes).
WRITES = frozenset({"setdefault", "update", "pop", "__setitem__"})


def env_reads(source: str) -> list[int]:
    """Lines of ``source`` that read the environment (any ``.environ`` other than
    a write, any ``.getenv``, ``from os import environ/getenv``)."""
    tree = ast.parse(source)
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "os":
            lines += [node.lineno for a in node.names if a.name in {"environ", "getenv", "getenvb", "environb"}]
        if isinstance(node, ast.Attribute) and node.attr in {"environ", "getenv", "getenvb", "environb"}:
            lines.append(node.lineno)
    writes = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in WRITES and _is_environ(node.value):
            writes.add(node.value.lineno)
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store | ast.Del) and _is_environ(node.value):
            writes.add(node.value.lineno)
    return sorted(line for line in lines if line not in writes)


def _is_environ(node: ast.expr) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "environ"


def test_the_scan_sees_reads_and_lets_writes_pass() -> None:
    assert env_reads("import os\nx = os.environ.get('A')\ny = os.getenv('B')\nz = os.environ['C']\n") == [2, 3, 4]
    assert env_reads("import os\nif 'A' in os.environ: pass\n") == [2]
    assert env_reads("from os import environ\n") == [1]
    assert env_reads("x = __import__('os').environ.get('A')\n") == [1]
    assert env_reads("import os\nos.environ.setdefault('A', '1')\nos.environ['B'] = '2'\n") == []


def test_only_the_env_module_reads_the_environment() -> None:
    files = [p for package in PRODUCT for p in sorted((ROOT / package).rglob("*.py"))]
    assert ENV_MODULE in files and len(files) > 50
    assert env_reads(ENV_MODULE.read_text("utf-8"))  # the scan sees the one reader
    found = {
        f"{p.relative_to(ROOT)}:{line}" for p in files if p != ENV_MODULE for line in env_reads(p.read_text("utf-8"))
    }
    assert not found, f"read the environment through mnemo.core.env: {sorted(found)}"


def test_only_declared_variables_are_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MNEMO_NOT_DECLARED", "x")
    with pytest.raises(KeyError):
        env.raw("MNEMO_NOT_DECLARED")


def test_text_is_the_default_when_unset_or_empty(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MNEMO_STRUCTURED_OUTPUT", raising=False)
    assert env.text("MNEMO_STRUCTURED_OUTPUT") == "auto"
    monkeypatch.setenv("MNEMO_STRUCTURED_OUTPUT", "  ")
    assert env.text("MNEMO_STRUCTURED_OUTPUT", strip=True) == "auto"
    monkeypatch.setenv("MNEMO_STRUCTURED_OUTPUT", " tool_calling ")
    assert env.text("MNEMO_STRUCTURED_OUTPUT", strip=True) == "tool_calling"


def test_a_bad_number_names_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MNEMO_MODEL_TIMEOUT_S", "soon")
    with pytest.raises(InvalidInputError, match="MNEMO_MODEL_TIMEOUT_S"):
        env.number("MNEMO_MODEL_TIMEOUT_S", 30, 1, 600)
    monkeypatch.setenv("MNEMO_MODEL_TIMEOUT_S", "9999")
    assert env.number("MNEMO_MODEL_TIMEOUT_S", 30, 1, 600) == 600
    monkeypatch.setenv("MNEMO_MODEL_TIMEOUT_S", "")
    assert env.number("MNEMO_MODEL_TIMEOUT_S", 30, 1, 600) == 30


def test_a_bad_choice_names_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MNEMO_STRUCTURED_OUTPUT", "telepathy")
    with pytest.raises(InvalidInputError, match="MNEMO_STRUCTURED_OUTPUT is one of auto, a; got 'telepathy'"):
        env.choice("MNEMO_STRUCTURED_OUTPUT", ("auto", "a"))


def test_the_run_cap_is_lenient_and_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MNEMO_MAX_RUNS_PER_USER", "many")
    assert env.bounded_int("MNEMO_MAX_RUNS_PER_USER", 1, 100) == 3
    monkeypatch.setenv("MNEMO_MAX_RUNS_PER_USER", "500")
    assert env.bounded_int("MNEMO_MAX_RUNS_PER_USER", 1, 100) == 100
    monkeypatch.setenv("MNEMO_MAX_RUNS_PER_USER", "0")
    assert env.bounded_int("MNEMO_MAX_RUNS_PER_USER", 1, 100) == 1


def test_names_and_flag(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MNEMO_ALLOWED_MODELS", " a, ,b ,a")
    assert env.names("MNEMO_ALLOWED_MODELS") == {"a", "b"}
    monkeypatch.setenv("MNEMO_DEV_LOGIN", "1")
    assert env.flag("MNEMO_DEV_LOGIN")
    monkeypatch.setenv("MNEMO_DEV_LOGIN", "yes")
    assert not env.flag("MNEMO_DEV_LOGIN")
