"""What a run skipped, said at its end: each distinct skip reason once, with
how many tests it skipped. A skip's reason names what is missing and the one
command that enables it (:func:`enable_with`), so the summary is the to-do
list of a machine that does not run every test."""

from __future__ import annotations

from collections import Counter
from typing import Any


def enable_with(missing: str, command: str) -> str:
    """The reason of a skip that one command lifts."""
    return f"{missing} — run `{command}` to enable"


def skip_reasons(reports: list[Any]) -> Counter[str]:
    """Skip reason -> tests it skipped, from pytest's skipped reports."""
    reasons: Counter[str] = Counter()
    for report in reports:
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        reasons[reason.removeprefix("Skipped: ")] += 1
    return reasons


def pytest_terminal_summary(terminalreporter: Any) -> None:
    reasons = skip_reasons(terminalreporter.stats.get("skipped", []))
    if not reasons:
        return
    terminalreporter.section("skipped: what did not run, and the command that runs it")
    for reason, n in reasons.items():
        terminalreporter.write_line(f"skipped: {n} test{'' if n == 1 else 's'}: {reason}")
