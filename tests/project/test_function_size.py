"""No function body in mnemo/ over 60 lines (issue 58 point 4): a longer one is
read as named steps instead (``mnemo/writing/apply.py``'s ``aapply_extraction``
was 106 lines of validation, grounding, refusals, revisions and reads sliced by
position)."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: The most lines a function's body may take, its docstring aside.
MAX_BODY_LINES = 60


def body_lines(function: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines from the first statement after the docstring to the function's last."""
    body = function.body
    has_doc = isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
    first = body[1] if has_doc and len(body) > 1 else body[0]
    return int(function.end_lineno or first.lineno) - first.lineno + 1


def functions(source: str) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [n for n in ast.walk(ast.parse(source)) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def test_no_function_body_in_mnemo_is_over_the_cap():
    sizes = {
        f"{path.relative_to(ROOT)}::{fn.name}": body_lines(fn)
        for path in sorted((ROOT / "mnemo").rglob("*.py"))
        for fn in functions(path.read_text("utf-8"))
    }
    assert len(sizes) > 500  # the scan sees mnemo's functions
    assert {name: n for name, n in sizes.items() if n > MAX_BODY_LINES} == {}


def test_a_body_is_measured_without_its_docstring():
    statements = "\n".join(f"    x{i} = {i}" for i in range(MAX_BODY_LINES + 1))
    source = f'async def long():\n    """Its docstring,\n    two lines."""\n{statements}\n'
    (long,) = functions(source)
    assert body_lines(long) == MAX_BODY_LINES + 1
    (short,) = functions(textwrap.dedent('def short():\n    """Only a docstring."""\n'))
    assert body_lines(short) == 1
