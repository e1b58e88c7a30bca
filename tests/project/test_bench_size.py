"""bench/ holds what is run, and docs/bench.md says what holds (issue 58 point 7):
the benchmarks' code (every module of ``bench/`` but its tests) stays within
:data:`MAX_BENCH_LINES`, their page within :data:`MAX_PAGE_LINES`. An experiment
that measured short leaves the tree; docs/bench.md keeps its figures and commit."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAX_BENCH_LINES = 6000
MAX_PAGE_LINES = 800


def _lines(path: Path) -> int:
    return len(path.read_text("utf-8").splitlines())


def bench_modules() -> list[Path]:
    """Every module of ``bench/`` (its sub-folders too) but ``bench/tests/``."""
    bench = ROOT / "bench"
    return sorted(p for p in bench.rglob("*.py") if (bench / "tests") not in p.parents)


def test_the_benchmarks_code_stays_within_its_cap():
    modules = bench_modules()
    names = {p.relative_to(ROOT).as_posix() for p in modules}
    assert {"bench/cli.py", "bench/locomo.py"} <= names  # the scan sees bench's modules
    assert not any(name.startswith("bench/tests/") for name in names)
    total = sum(_lines(p) for p in modules)
    assert total > 1000  # and counts their lines
    assert total <= MAX_BENCH_LINES, f"bench/ is {total} lines (cap {MAX_BENCH_LINES}): {len(modules)} modules"


def test_the_benchmarks_page_stays_within_its_cap():
    page = ROOT / "docs" / "bench.md"
    lines = _lines(page)
    assert lines > 100  # the page is read
    assert lines <= MAX_PAGE_LINES, f"docs/bench.md is {lines} lines (cap {MAX_PAGE_LINES})"
