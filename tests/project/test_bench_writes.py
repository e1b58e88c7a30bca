"""bench writes notes through mnemo (issue 58 point 3): no bench module builds the
note index itself, and the scale benchmarks load notes with
:func:`mnemo.notes.aremember_bulk`, never by store writes of their own (which
leave no audit record and can leave the index out of step)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: The note index's write internals: a module using one writes notes around mnemo.
INDEX_INTERNALS = {"IndexState", "NoteChange", "write_ops", "terms_touched", "read_ops", "HEAD_KEY", "term_key"}
#: The benchmarks that load many notes.
SCALE_MODULES = ("memory_scale", "many_users")
#: The store's methods that write (a call of one on anything counts).
STORE_WRITES = {"abatch", "batch", "aput", "put"}


def names_used(tree: ast.AST) -> set[str]:
    """Every name imported, read or called (``x``, ``obj.x``, ``from m import x``) in ``tree``."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            out.add(node.id)
        elif isinstance(node, ast.Attribute):
            out.add(node.attr)
        elif isinstance(node, ast.ImportFrom):
            out.update(alias.name for alias in node.names)
            out.add(node.module or "")
        elif isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
    return out


def store_writes(tree: ast.AST) -> list[str]:
    """Each call of a store's writing method, and each ``PutOp`` named, in ``tree``."""
    return [
        ast.unparse(node)
        for node in ast.walk(tree)
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in STORE_WRITES)
        or (isinstance(node, ast.Name) and node.id == "PutOp")
        or (isinstance(node, ast.alias) and node.name == "PutOp")
    ]


def tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text("utf-8"))


@pytest.mark.parametrize("path", sorted((ROOT / "bench").rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_bench_module_touches_the_note_index(path):
    used = names_used(tree(path))
    assert "mnemo.notes.index" not in used and not used & INDEX_INTERNALS, sorted(used & INDEX_INTERNALS)


@pytest.mark.parametrize("name", SCALE_MODULES)
def test_the_scale_benchmarks_load_notes_through_mnemo(name):
    parsed = tree(ROOT / "bench" / f"{name}.py")
    assert "aremember_bulk" in names_used(parsed)
    assert store_writes(parsed) == []


def test_a_store_write_is_seen():
    """The check above finds each form of a direct write (its precondition)."""
    source = "store.abatch([PutOp(ns, 'k', {})])\nawait s.aput(ns, 'k', {})\nfrom x import PutOp\nb.batch(ops)"
    assert len(store_writes(ast.parse(source))) == 5
