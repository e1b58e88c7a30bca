"""The README's library example runs as written and prints what its comments say."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def library_example() -> str:
    """The python block of the README's "The library" section."""
    section = (ROOT / "README.md").read_text("utf-8").split("\n## The library\n", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"```python\n(.*?)```", section, re.S)
    return block


def test_the_readme_library_example_prints_what_it_says(capsys):
    code = library_example()
    expected = re.findall(r"^\s*print\(.*\)  # (.*)$", code, re.M)
    assert len(expected) == 2 and len(code.splitlines()) <= 20  # the precondition: what it promises, briefly
    exec(compile(code, "README.md", "exec"), {"__name__": "__readme__"})
    assert capsys.readouterr().out.splitlines() == expected
