"""What README.md and docs/*.md cite exists: every backticked dotted name of a
first-party module, function, class or constant resolves, every ``from ... import``
of a first-party package in a Python example imports, and every repo path or
relative link (with its ``#anchor``) points at something. A rename that leaves
the docs behind fails here, and so does a ``python -m mnemo`` command or flag
the docs show that the CLI does not have.
"""

from __future__ import annotations

import glob
import importlib
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: First-party packages a dotted name in the docs may start with.
PACKAGES = ("mnemo", "nodes", "graphs", "server", "web")
#: Top-level directories of the repository a cited path may start with
#: (runtime directories such as ``.mnemo/`` or ``.langgraph_api/`` are not cited files).
REPO_DIRS = ("mnemo", "nodes", "graphs", "server", "web", "harness", "tests", "bench", "docs", "scripts", ".ci")

_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)
_SPAN = re.compile(r"`([^`\n]+)`")
_ROLE = re.compile(r":(?:mod|func|class|data|meth|attr|exc):`~?([\w.]+)`")
_DOTTED = re.compile(rf"^((?:{'|'.join(PACKAGES)})(?:\.[A-Za-z_]\w*)+)(?:\(.*\))?$")
_IMPORT = re.compile(rf"^\s*from ((?:{'|'.join(PACKAGES)})[\w.]*) import \(?([\w, ]+)\)?\s*(?:#.*)?$", re.M)
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_PATH = re.compile(rf"^(?:\./)?(?:{'|'.join(re.escape(d) for d in REPO_DIRS)})/[\w./{{}},*-]*$")


def _prose(text: str) -> str:
    """``text`` without its fenced code blocks."""
    return _FENCE.sub("", text)


def dotted_names(text: str) -> set[str]:
    """Backticked (or ``:role:``) dotted names of first-party code in ``text``'s prose."""
    names = {m.group(1) for span in _SPAN.findall(_prose(text)) if (m := _DOTTED.match(span.strip()))}
    names.update(n for n in _ROLE.findall(text) if n.split(".")[0] in PACKAGES)
    return names


def example_imports(text: str) -> set[str]:
    """``module.name`` for every first-party ``from module import name`` in the Python examples."""
    out: set[str] = set()
    for lang, body in _FENCE.findall(text):
        if lang in ("python", "py", ""):
            for module, names in _IMPORT.findall(body):
                out.update(f"{module}.{n.split(' as ')[0].strip()}" for n in names.split(",") if n.strip())
    return out


def repo_paths(text: str) -> set[str]:
    """Repo paths cited in backticks in ``text``'s prose, without a leading ``./``."""
    return {path for path, _ in _cited_files(text)}


def path_attributes(text: str) -> set[str]:
    """``module.attr`` for every ``path.py:attr`` the prose cites (``langgraph.json``'s notation)."""
    return {".".join(Path(path).with_suffix("").parts) + "." + attr for path, attr in _cited_files(text) if attr}


def _cited_files(text: str) -> Iterator[tuple[str, str]]:
    for span in _SPAN.findall(_prose(text)):
        for token in span.split():
            token = token.rstrip(",;.)")
            path, _, attr = token.partition(":") if re.search(r"\.py:\w+$", token) else (token, "", "")
            if _PATH.match(path):
                yield path.removeprefix("./"), attr


def links(text: str) -> set[str]:
    """Relative link targets of ``text`` (no URLs)."""
    return {t for t in _LINK.findall(text) if not re.match(r"^[a-z]+:", t)}


def cli_calls(text: str) -> set[tuple[str, str]]:
    """``(command, --flag)`` (flag ``""`` for the command alone) of every ``python -m mnemo`` call shown."""
    out: set[tuple[str, str]] = set()
    for call in re.findall(r"python -m mnemo ([a-z][\w-]*)([^`\n#]*)", text):
        command, rest = call
        out.add((command, ""))
        out.update((command, flag) for flag in re.findall(r"(?<![\w-])(--[a-z][\w-]*)", rest))
    return out


def cli_has(command: str, flag: str) -> bool:
    from mnemo.cli.command_line import COMMANDS

    cmd = COMMANDS.get(command)
    return cmd is not None and (not flag or any(flag in a.flags for a in cmd.args))


def _expand(path: str) -> list[str]:
    """``a.{json,png}`` -> ``[a.json, a.png]``."""
    m = re.search(r"\{([^}]*)\}", path)
    if not m:
        return [path]
    return [x for alt in m.group(1).split(",") for x in _expand(path[: m.start()] + alt + path[m.end() :])]


def path_exists(path: str, base: Path = ROOT) -> bool:
    return all(
        bool(glob.glob(str(base / p))) if any(c in p for c in "*?[") else (base / p).exists() for p in _expand(path)
    )


def resolves(name: str) -> bool:
    """Whether ``name`` is an importable module or an attribute chain of one."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attr in parts[cut:]:
            if hasattr(obj, attr):
                obj = getattr(obj, attr)
            elif attr in getattr(obj, "__annotations__", {}):  # a field without a class-level default
                obj = None
            else:
                return False
        return True
    return False


def slug(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading."""
    text = heading.strip().lower().replace("`", "")
    return re.sub(r"\s", "-", re.sub(r"[^\w\s-]", "", text))


def anchors(doc: Path) -> set[str]:
    return {slug(h) for h in re.findall(r"^#+ (.+)$", _prose(doc.read_text("utf-8")), re.M)}


@pytest.fixture
def importable(monkeypatch) -> Iterator[None]:
    """``server.auth`` refuses to import without a secret; nothing imported here outlives the test."""
    monkeypatch.setenv("MNEMO_JWT_SECRET", "doc-references-" + "x" * 32)
    before = set(sys.modules)
    yield
    for module in set(sys.modules) - before:
        if module.split(".")[0] == "server":
            del sys.modules[module]


def _id(doc: Path) -> str:
    return str(doc.relative_to(ROOT))


@pytest.mark.parametrize("doc", DOCS, ids=_id)
def test_code_the_docs_name_exists(doc: Path, importable: None) -> None:
    text = doc.read_text("utf-8")
    names = dotted_names(text) | example_imports(text) | path_attributes(text)
    missing = sorted(n for n in names if not resolves(n))
    assert not missing, f"{_id(doc)} names code that does not exist: {missing}"


@pytest.mark.parametrize("doc", DOCS, ids=_id)
def test_paths_and_links_the_docs_cite_exist(doc: Path) -> None:
    text = doc.read_text("utf-8")
    missing = sorted(p for p in repo_paths(text) if not path_exists(p))
    for target in links(text):
        path, _, anchor = target.partition("#")
        dest = (doc.parent / path) if path else doc
        if path and not path_exists(path, doc.parent):
            missing.append(target)
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            missing.append(target)
    assert not missing, f"{_id(doc)} cites paths or anchors that do not exist: {missing}"


@pytest.mark.parametrize("doc", DOCS, ids=_id)
def test_cli_calls_the_docs_show_exist(doc: Path) -> None:
    missing = sorted(f"{c} {f}".strip() for c, f in cli_calls(doc.read_text("utf-8")) if not cli_has(c, f))
    assert not missing, f"{_id(doc)} shows `python -m mnemo` commands or flags that do not exist: {missing}"


def test_the_checks_see_what_the_docs_cite(importable: None) -> None:
    """The collectors find real citations of each kind (else the tests above pass on nothing),
    and the checks refuse what does not exist."""
    readme = (ROOT / "README.md").read_text("utf-8")
    assert "mnemo.access.tokens.mint_token" in dotted_names(readme)
    assert "tests/js/sdk_smoke.mjs" in repo_paths(readme)
    assert "docs/security.md" in links(readme)
    assert {("token", "--admin"), ("chat", "--thread")} <= cli_calls(readme)
    memory = (ROOT / "docs" / "memory.md").read_text("utf-8")
    assert "mnemo.index_config" in example_imports(memory)
    cited = "`./mnemo/stores/embeddings.py:embeddings`"
    assert repo_paths(cited) == {"mnemo/stores/embeddings.py"}
    assert path_attributes(cited) == {"mnemo.stores.embeddings.embeddings"}

    assert resolves("mnemo.access.tokens.mint_token") and resolves("server.auth")
    assert not resolves("mnemo.access.tokens.mint_tokens")
    assert not resolves("mnemo.no_such_module.name")
    assert cli_has("erase", "--threads") and not cli_has("erase", "--everything") and not cli_has("forget", "")
    assert path_exists("bench/results/store_scale.{json,png}") and not path_exists("tests/test_no_such_file.py")
    assert "identity-and-access" in anchors(ROOT / "docs" / "security.md")
    assert slug("The server's trust boundary") == "the-servers-trust-boundary"
