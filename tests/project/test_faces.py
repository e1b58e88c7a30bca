"""Each sub-package's ``__init__`` (its face) exports what other layers use and
nothing else; ``mnemo/__init__`` is the library's documented API.

Sorted ``__all__``s are ruff's rule RUF022 (pyproject.toml), checked by CI.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import typing
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


def api_types(module) -> set[str]:
    """Names of the classes that the face's exported callables take or return:
    a typed API exports them though callers only annotate with them."""
    seen: set[str] = set()
    for name in module.__all__:
        obj = getattr(module, name)
        if not callable(obj) or inspect.isclass(obj):
            continue
        try:
            hints = typing.get_type_hints(obj)
        except Exception:  # an annotation naming a type only under TYPE_CHECKING
            continue
        for hint in hints.values():
            stack = [hint]
            while stack:
                h = stack.pop()
                if inspect.isclass(h):
                    seen.add(h.__name__)
                stack.extend(typing.get_args(h))
    return seen


def test_faces_are_found():
    assert {"audit", "core", "kinds", "notes", "stores", "writing"} <= set(FACES)


@pytest.mark.parametrize("face", ["mnemo", *(f"mnemo.{f}" for f in FACES)])
def test_a_face_exports_each_name_once_and_every_name_exists(face):
    names = exported(face)
    assert names, f"{face} has no __all__"
    assert [n for n, c in Counter(names).items() if c > 1] == []
    module = importlib.import_module(face)
    assert [n for n in names if not hasattr(module, n)] == []


@pytest.mark.parametrize("face", [f"mnemo.{f}" for f in FACES])
def test_a_sub_package_exports_only_what_other_layers_use(face):
    module = importlib.import_module(face)
    used = imported_from(face) | api_types(module)
    errors = {
        n for n in module.__all__ if inspect.isclass(getattr(module, n)) and issubclass(getattr(module, n), Exception)
    }
    unused = sorted(set(module.__all__) - used - errors)
    assert unused == [], f"{face} exports names no other layer imports: {unused}"


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
