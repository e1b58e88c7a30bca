"""Each sub-package's ``__init__`` (its face) exports what other layers use and
nothing else; ``mnemo/__init__`` is mnemo's one face: the library's documented
API and what the app (and the benchmarks) import, nothing else; the docs import
from it.

Sorted ``__all__``s are ruff's rule RUF022 (pyproject.toml), checked by CI.
"""

from __future__ import annotations

import ast
import importlib
import re
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: Where the names of a face are used from: the product and the benchmarks (tests
#: may import a module's internals directly; they do not make a name public).
USERS = ("mnemo", "nodes", "graphs", "web", "server", "bench")
FACES = sorted(p.parent.name for p in (ROOT / "mnemo").glob("*/__init__.py"))


def exported(package: str) -> list[str]:
    tree = ast.parse((ROOT / package.replace(".", "/") / "__init__.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
            return [ast.literal_eval(e) for e in node.value.elts]  # type: ignore[attr-defined]
    return []


def imported_from(face: str) -> set[str]:
    """The names that modules outside ``face``'s package and outside tests import from it."""
    inside = ROOT / face.replace(".", "/")
    names: set[str] = set()
    for top in USERS:
        for path in (ROOT / top).rglob("*.py"):
            if path.is_relative_to(inside) or "tests" in path.relative_to(ROOT).parts:
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == face:
                    names.update(a.name for a in node.names)
    return names


def test_faces_are_found():
    assert {"audit", "core", "profile", "instructions", "notes", "stores", "writing"} <= set(FACES)


@pytest.mark.parametrize("face", ["mnemo", *(f"mnemo.{f}" for f in FACES)])
def test_a_face_exports_each_name_once_and_every_name_exists(face):
    names = exported(face)
    assert names, f"{face} has no __all__"
    assert [n for n, c in Counter(names).items() if c > 1] == []
    module = importlib.import_module(face)
    assert [n for n in names if not hasattr(module, n)] == []


@pytest.mark.parametrize("face", [f"mnemo.{f}" for f in FACES])
def test_a_sub_package_exports_only_what_other_layers_use(face):
    """What the other sub-packages, ``mnemo``'s face and bench import; a type or
    an error nobody imports stays in its module."""
    module = importlib.import_module(face)
    used = imported_from(face)
    assert used, f"nothing imports {face}"  # the scan sees its users
    unused = sorted(set(module.__all__) - used)
    assert unused == [], f"{face} exports names no other layer imports: {unused}"


def documented() -> set[str]:
    """The names ``mnemo``'s docstring documents (``:func:`name``` and the like)."""
    import mnemo

    return set(re.findall(r":(?:func|class|data|exc):`(\w+)`", mnemo.__doc__ or ""))


def test_mnemos_face_exports_what_is_used_or_documented():
    import mnemo

    used, doc = imported_from("mnemo"), documented()
    assert {"open_store", "index_config", "aremember", "MnemoError"} <= doc  # the docstring lists the API
    assert {"User", "arecall"} <= used  # the scan sees imports of the face
    assert sorted(doc - set(mnemo.__all__)) == [], "the docstring documents names the face does not export"
    unused = sorted(set(mnemo.__all__) - used - doc)
    assert unused == [], f"mnemo exports names neither documented nor imported by the app or bench: {unused}"


def test_the_docs_import_mnemo_from_its_face():
    """README.md and docs/*.md import a name of mnemo from ``mnemo``, never from a
    sub-package (a page about one module may import that module whole)."""
    import mnemo
    from tests.project.test_doc_references import DOCS, example_imports

    shown = {str(d.relative_to(ROOT)): example_imports(d.read_text("utf-8")) for d in DOCS}
    assert "mnemo.open_store" in shown["README.md"] and "mnemo.index_config" in shown["docs/memory.md"]
    names = {(doc, n) for doc, found in shown.items() for n in found if n.split(".")[0] == "mnemo"}
    deep = [
        f"{doc}: {n}"
        for doc, n in names
        if n.count(".") > 1 and not ROOT.joinpath(*n.split(".")).with_suffix(".py").is_file()
    ]
    assert sorted(deep) == [], "import these from mnemo"
    assert sorted(f"{doc}: {n}" for doc, n in names if n.count(".") == 1 and n[6:] not in mnemo.__all__) == []


def test_the_package_says_it_is_typed():
    assert (ROOT / "mnemo" / "py.typed").is_file()


async def test_the_api_example_runs_as_written():
    import textwrap

    import mnemo

    doc = mnemo.__doc__ or ""
    block = doc.split("Example::", 1)[1].split("\n\n", 1)[1]
    code = textwrap.dedent(block[: block.index("\nErrors are")])
    assert "aremember" in code and "assert" in code
    namespace: dict = {}
    exec(compile("async def example():\n" + textwrap.indent(code, "    "), "mnemo.__doc__", "exec"), namespace)
    await namespace["example"]()


#: The app: what ``langgraph.json`` loads (``tests/project/test_packaging.py``).
APP = ("graphs", "nodes", "server", "web")


def test_the_app_imports_mnemos_face_only():
    """``from mnemo import name``, a name on the face: never a sub-package's face or module."""
    import mnemo

    seen, wrong = 0, []
    for top in APP:
        for path in sorted((ROOT / top).rglob("*.py")):
            where = path.relative_to(ROOT)
            for node in ast.walk(ast.parse(path.read_text("utf-8"))):
                if isinstance(node, ast.Import):
                    wrong += [f"{where}: import {a.name}" for a in node.names if a.name.split(".")[0] == "mnemo"]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == "mnemo":
                    seen += len(node.names)
                    wrong += [f"{where}: {a.name} is off the face" for a in node.names if a.name not in mnemo.__all__]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module.split(".")[0] == "mnemo":
                    seen += len(node.names)
                    wrong.append(f"{where}: from {node.module} import ...")
    assert seen > 100  # the scan sees the app's imports of mnemo
    assert wrong == []


def test_no_name_stands_on_two_faces():
    """A name is exported by one sub-package's face; ``mnemo``'s face re-exports it, the same object."""
    import mnemo

    homes: dict[str, list[str]] = {}
    for face in FACES:
        for name in exported(f"mnemo.{face}"):
            homes.setdefault(name, []).append(face)
    assert len(homes) > 200 and "User" in homes  # the scan reads the faces
    assert {name: faces for name, faces in homes.items() if len(faces) > 1} == {}
    assert [n for n in mnemo.__all__ if n not in homes] == [], "mnemo's face re-exports, it defines nothing"
