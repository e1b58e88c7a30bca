"""Remembered text as the model is shown it: quoted data, never instructions.

:func:`quote` renders a value as a one-line JSON string literal with controls,
line separators, ``<`` and ``>`` escaped, so no remembered text can start a line
of the prompt or leave its :func:`data_block`.
"""

from __future__ import annotations

import json
import unicodedata

#: Unicode categories escaped besides what ``json.dumps`` escapes: C1 controls
#: (NEL ends a line for some readers), format characters (bidi overrides,
#: zero-width characters that hide text), line and paragraph separators.
_HIDDEN = frozenset({"Cc", "Cf", "Zl", "Zp"})


def _escaped(ch: str) -> str:
    if ch in "<>" or unicodedata.category(ch) in _HIDDEN:
        return f"\\u{ord(ch):04x}"
    return ch


def quote(value: object) -> str:
    """``value`` as a one-line JSON string literal with ``<``, ``>`` and every
    control, format and separator character escaped."""
    return "".join(_escaped(ch) for ch in json.dumps(str(value), ensure_ascii=False))


def neutralize(text: str) -> str:
    """``text`` with ``<`` and ``>`` escaped, so it cannot open or close a delimiter."""
    return text.replace("<", "\\u003c").replace(">", "\\u003e")


def data_block(tag: str, body: str) -> str:
    """``body`` between ``<tag>`` and ``</tag>``, with no delimiter left inside it."""
    return f"<{tag}>\n{neutralize(body)}\n</{tag}>"
