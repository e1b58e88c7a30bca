"""Markdown tables of the JSON results (``python -m bench report --out DIR``).

``docs/bench.md`` pastes this output, so the tables in the docs are exactly
what the JSON says; rerun it after a new run.
"""

from __future__ import annotations

from pathlib import Path

from bench.common import read_json
from bench.report_locomo import locomo_tables, tune_tables


def markdown(out: Path) -> str:
    parts = []
    for name, title, fn in (
        ("locomo.json", "LoCoMo recall", locomo_tables),
        ("tune.json", "LoCoMo: ablations and settings (`python -m bench tune`)", tune_tables),
    ):
        d = read_json(out / name)
        if d is not None:
            parts.append(f"### {title}\n\n{fn(d)}\n")
    from bench.quality_score import report as quality_table

    for path in sorted(out.glob("memory_quality_*.json")):  # python -m bench memory-quality
        d = read_json(path)
        if d is not None:
            parts.append(f"### Memory quality: {d['meta']['model']}\n\n{quality_table(d)}\n")
    return "\n".join(parts)
