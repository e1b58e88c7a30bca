"""What every backend may store: PostgreSQL's rules, checked on all of them.

Every write, search filter and query is checked against PostgreSQL's ``jsonb`` /
``text`` rules on every backend, so a value accepted in tests is accepted in
production: :class:`UnstorableValueError` before anything is written.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from langgraph.store.base import GetOp, Op, PutOp, SearchOp, validate_op_namespace

from mnemo.core.errors import UnstorableValueError

_JSON_TYPES = "dict, list, str, int, float, bool or None"


def check_storable_text(text: str, what: str) -> None:
    """Refuse text PostgreSQL cannot store, on every backend alike."""
    if "\x00" in text:
        raise UnstorableValueError(f"{what} contains a NUL character (\\x00), which PostgreSQL cannot store")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise UnstorableValueError(f"{what} is not valid Unicode ({exc.reason}: an unpaired surrogate?)") from None


def json_value(value: Any, where: str = "value") -> Any:
    """A private copy of ``value`` as PostgreSQL's ``jsonb`` would return it
    (tuples become lists), or :class:`UnstorableValueError`."""
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, str):
        check_storable_text(value, where)
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise UnstorableValueError(f"{where} is {value}; JSON has no NaN or Infinity")
        return value
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise UnstorableValueError(f"{where} has a {type(key).__name__} key {key!r}; JSON keys are strings")
            check_storable_text(key, f"a key of {where}")
            out[key] = json_value(item, f"{where}[{key!r}]")
        return out
    if isinstance(value, list | tuple):
        return [json_value(item, f"{where}[{i}]") for i, item in enumerate(value)]
    raise UnstorableValueError(f"{where} is a {type(value).__name__}; store values must be JSON ({_JSON_TYPES})")


def checked_ops(ops: Iterable[Op]) -> list[Op]:
    """``ops`` with every namespace label, key and value checked the same way on
    every backend (PostgreSQL's rules); put values are copied.

    Raises:
        UnstorableValueError: a key, value, filter or query PostgreSQL cannot store.
        InvalidNamespaceError: a namespace label with ``.`` (even for ops passed
            straight to ``abatch``, which the stock stores do not check).
    """
    out: list[Op] = []
    for op in ops:
        validate_op_namespace(op)
        if isinstance(op, GetOp):
            check_storable_text(op.key, "the item key")
        elif isinstance(op, SearchOp):
            if op.query:
                check_storable_text(op.query, "the search query")
            if op.filter:
                json_value(dict(op.filter), "the search filter")
        elif isinstance(op, PutOp):
            check_storable_text(op.key, "the item key")
            if op.value is not None:
                if not isinstance(op.value, Mapping):
                    raise UnstorableValueError(f"an item value is a dict, got {type(op.value).__name__}")
                op = op._replace(value=json_value(dict(op.value)))
        out.append(op)
    return out
