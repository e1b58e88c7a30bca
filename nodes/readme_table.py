"""The README's configuration table, generated from the fields of
:class:`nodes.context.Context` (each described once, in its :func:`~nodes.context.setting`):
``python -m nodes.readme_table --write-readme`` writes it between the README's markers,
without the flag prints it."""

from __future__ import annotations

import re
import sys
from dataclasses import fields
from pathlib import Path

from nodes.context import Context, choices

README = Path(__file__).resolve().parents[1] / "README.md"
TABLE_BEGIN, TABLE_END = "<!-- context-table:begin -->", "<!-- context-table:end -->"


def _md(text: str) -> str:
    return text.replace("``", "`")


def _meaning(description: str) -> str:
    """The first sentence of a field's description, as a table cell."""
    sentence = re.split(r"(?<=\.)\s", description, maxsplit=1)[0].rstrip(".")
    return sentence[:1].lower() + sentence[1:]


def readme_table() -> str:
    """The README's configuration table, from the fields' :func:`setting` calls."""
    rows = ["| field | default | range | meaning |", "|---|---|---|---|"]
    for f in fields(Context):
        meta = f.metadata
        default = meta["shown_default"] or (f"``{f.default}``" if isinstance(f.default, str) else f"{f.default:g}")
        if meta["knob"]:
            shown_range = meta["knob"].shown
        elif f.name in choices():
            shown_range = ", ".join(f"``{choice}``" for choice in choices()[f.name])
        else:
            shown_range = meta["shown_range"] or ""
        rows.append(f"| ``{f.name}`` | {default} | {shown_range} | {_meaning(meta['description'])} |")
    return _md("\n".join(rows))


def with_table(readme: str) -> str:
    """``readme`` with its configuration table (between the markers) regenerated."""
    begin, end = readme.index(TABLE_BEGIN) + len(TABLE_BEGIN), readme.index(TABLE_END)
    note = "<!-- generated from nodes/context.py: python -m nodes.readme_table --write-readme -->"
    return f"{readme[:begin]}\n{note}\n{readme_table()}\n{readme[end:]}"


if __name__ == "__main__":
    if sys.argv[1:] == ["--write-readme"]:
        README.write_text(with_table(README.read_text("utf-8")), "utf-8")
    else:
        print(readme_table())
