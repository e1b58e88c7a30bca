"""Markdown cells and tables of the benchmarks' reports (:mod:`bench.report`)."""

from __future__ import annotations


def pct(x: float | None) -> str:
    """A fraction as a percentage with one decimal ("-" for none)."""
    return "-" if x is None else f"{100 * x:.1f}"


def num(x: float | None, digits: int = 0) -> str:
    """A number with thousands separators ("-" for none)."""
    return "-" if x is None else f"{x:,.{digits}f}"


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    """A markdown table's lines."""
    return ["| " + " | ".join(header) + " |", "|---" * len(header) + "|", *("| " + " | ".join(r) + " |" for r in rows)]
