"""mnemo.core.errors: the tree its docstring draws is the class tree."""

from __future__ import annotations

import re

from mnemo.core import errors
from mnemo.core.errors import MnemoError


def _drawn_tree() -> dict[str, str]:
    """Class -> its parent, as the module docstring draws them."""
    parents: dict[str, str] = {}
    stack: list[str] = []
    for line in (errors.__doc__ or "").splitlines():
        match = re.match(r"\s*((?:│   |    )*)(?:├── |└── )?([A-Z]\w+Error)\b", line)
        if not match:
            continue
        depth = len(match.group(1)) // 4 + (1 if "── " in line else 0)
        stack[depth:] = [match.group(2)]
        if depth:
            parents[match.group(2)] = stack[depth - 1]
    return parents


def _class_tree() -> dict[str, str]:
    found = [c for c in vars(errors).values() if isinstance(c, type) and issubclass(c, MnemoError)]
    return {
        c.__name__: next(b for b in c.__bases__ if issubclass(b, MnemoError)).__name__
        for c in found
        if c is not MnemoError
    }


def test_the_docstring_draws_every_error_under_its_parent():
    drawn = _drawn_tree()
    assert drawn["UnstorableValueError"] == "InvalidInputError"  # the drawing is read, nesting included
    assert drawn == _class_tree()
