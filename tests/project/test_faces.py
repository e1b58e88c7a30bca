"""mnemo has two faces and each sub-package one. ``mnemo/__init__`` is the
library's face: exactly the API its docstring documents, at most
:data:`LIBRARY_CAP` names. ``mnemo/app/__init__.py`` is the app's face: exactly what
``graphs/``, ``nodes/``, ``server/`` and ``web/`` import, and they import mnemo
through it alone. Each sub-package's ``__init__`` exports what the rest of mnemo
(its two faces included) imports of it and nothing else. A name only tests or
bench use is on no face: they import it from the module that defines it. No face,
and no ``__all__`` anywhere, holds a private name (``_x``); the docs import from
``mnemo``.

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
#: The sub-packages' faces (``mnemo.app``, the app's face, stands beside them as ``mnemo`` does).
FACES = sorted(p.parent.name for p in (ROOT / "mnemo").glob("*/__init__.py") if p.parent.name != "app")
#: The app, what ``langgraph.json`` loads (``tests/project/test_packaging.py``).
APP = ("graphs", "nodes", "server", "web")
#: The most names the library's face may export.
LIBRARY_CAP = 45


def exported(face: str) -> list[str]:
    tree = ast.parse((ROOT / face.replace(".", "/") / "__init__.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
            return [ast.literal_eval(e) for e in node.value.elts]  # type: ignore[attr-defined]
    return []


def imported_from(face: str, users: tuple[str, ...] = ("mnemo",)) -> set[str]:
    """The names that modules of ``users`` outside ``face``'s own package import from it."""
    inside = ROOT / face.replace(".", "/")
    names: set[str] = set()
    for top in users:
        for path in (ROOT / top).rglob("*.py"):
            if path.is_relative_to(inside):
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == face:
                    names.update(a.name for a in node.names)
    return names


def test_faces_are_found():
    assert {"audit", "core", "profile", "instructions", "notes", "stores", "writing"} <= set(FACES)


@pytest.mark.parametrize("face", ["mnemo", "mnemo.app", *(f"mnemo.{f}" for f in FACES)])
def test_a_face_exports_each_name_once_and_every_name_exists(face):
    names = exported(face)
    assert names, f"{face} has no __all__"
    assert [n for n, c in Counter(names).items() if c > 1] == []
    module = importlib.import_module(face)
    assert [n for n in names if not hasattr(module, n)] == []


@pytest.mark.parametrize("face", [f"mnemo.{f}" for f in FACES])
def test_a_sub_package_exports_only_what_other_layers_use(face):
    """What the rest of mnemo imports (the other sub-packages, the CLI, the two
    faces); a name only tests or bench use stays in its module."""
    module = importlib.import_module(face)
    used = imported_from(face)
    assert used, f"nothing imports {face}"  # the scan sees its users
    unused = sorted(set(module.__all__) - used)
    assert unused == [], f"{face} exports names no other layer imports: {unused}"


def documented() -> set[str]:
    """The names ``mnemo``'s docstring documents (``:func:`name``` and the like)."""
    import mnemo

    return set(re.findall(r":(?:func|class|data|exc):`(\w+)`", mnemo.__doc__ or ""))


def test_the_library_face_is_the_documented_api():
    import mnemo

    doc = documented()
    assert {"open_store", "index_config", "aremember", "aremember_many", "MnemoError"} <= doc  # the scan reads it
    assert sorted(doc - set(mnemo.__all__)) == [], "the docstring documents names the face does not export"
    assert sorted(set(mnemo.__all__) - doc) == [], "the face exports names its docstring does not document"
    assert len(mnemo.__all__) <= LIBRARY_CAP


def test_the_app_face_exports_what_the_app_imports():
    import mnemo.app

    used = imported_from("mnemo.app", APP)
    assert {"User", "aload_snapshot", "caller_from_authorization"} <= used  # the scan sees the app's imports
    assert sorted(set(mnemo.app.__all__) - used) == [], "mnemo.app exports names the app does not import"
    assert sorted(used - set(mnemo.app.__all__)) == []
    assert imported_from("mnemo.app", ("mnemo", "bench")) == set()  # the app's alone


FIRST_PARTY = (*APP, "mnemo", "bench")


def test_no_private_name_on_a_face_or_in_any_all():
    """Every ``__all__`` of the product and bench; and none of their modules
    imports another first-party module's private name (tests may, as tests/ does)."""
    alls, imports = {}, []
    for top in FIRST_PARTY:
        for path in sorted((ROOT / top).rglob("*.py")):
            where = str(path.relative_to(ROOT))
            for node in ast.walk(ast.parse(path.read_text("utf-8"))):
                if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
                    alls[where] = [ast.literal_eval(e) for e in node.value.elts]
                elif (
                    isinstance(node, ast.ImportFrom)
                    and (node.module or "").split(".")[0] in FIRST_PARTY
                    and "tests" not in path.relative_to(ROOT).parts
                ):
                    imports += [f"{where}: {node.module}.{a.name}" for a in node.names if a.name.startswith("_")]
    assert {"mnemo/__init__.py", "mnemo/app/__init__.py", "mnemo/core/__init__.py", "nodes/chat_models.py"} <= set(alls)
    assert {where: [n for n in names if n.startswith("_")] for where, names in alls.items()} == dict.fromkeys(alls, [])
    assert imports == []


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


def test_the_app_imports_mnemo_through_its_face_only():
    """``from mnemo.app import name``: never ``mnemo``, a sub-package's face or a module."""
    seen, wrong = 0, []
    for top in APP:
        for path in sorted((ROOT / top).rglob("*.py")):
            where = path.relative_to(ROOT)
            for node in ast.walk(ast.parse(path.read_text("utf-8"))):
                if isinstance(node, ast.Import):
                    wrong += [f"{where}: import {a.name}" for a in node.names if a.name.split(".")[0] == "mnemo"]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == "mnemo.app":
                    seen += len(node.names)
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module.split(".")[0] == "mnemo":
                    wrong.append(f"{where}: from {node.module} import ...")
    assert seen > 100  # the scan sees the app's imports of mnemo
    assert wrong == []


def test_no_name_stands_on_two_faces():
    """A name is exported by one sub-package's face; ``mnemo`` and ``mnemo.app`` re-export it."""
    import mnemo
    import mnemo.app

    homes: dict[str, list[str]] = {}
    for face in FACES:
        for name in exported(f"mnemo.{face}"):
            homes.setdefault(name, []).append(face)
    assert len(homes) > 200 and "User" in homes  # the scan reads the faces
    assert {name: faces for name, faces in homes.items() if len(faces) > 1} == {}
    for face in (mnemo, mnemo.app):
        assert [n for n in face.__all__ if n not in homes] == [], f"{face.__name__} re-exports, it defines nothing"
