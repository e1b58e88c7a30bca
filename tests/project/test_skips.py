"""A run ends naming what it skipped, once per reason, with the command that
enables it (tests/skips.py); a run that skipped nothing says nothing more."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from harness.store_backends import ROOT

SKIPPING = """
import pytest
from tests.skips import enable_with

def test_runs():
    pass

@pytest.mark.parametrize("n", [1, 2])
def test_needs_a_tool(n):
    pytest.skip(enable_with("the tool is not installed", "apt-get install the-tool"))

@pytest.mark.skipif(True, reason=enable_with("FLAG=1", "unset FLAG"))
def test_needs_the_flag_off():
    pass
"""
NOT_SKIPPING = """
def test_runs():
    pass
"""


def run_pytest(tmp_path: Path, tests: str) -> str:
    (tmp_path / "conftest.py").write_text("from tests.skips import pytest_terminal_summary  # noqa: F401\n")
    (tmp_path / "test_sample.py").write_text(tests)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", str(tmp_path)],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.stdout


def test_the_summary_names_each_skip_reason_with_its_command(tmp_path):
    out = run_pytest(tmp_path, SKIPPING)
    assert "1 passed, 3 skipped" in out
    assert "skipped: 2 tests: the tool is not installed — run `apt-get install the-tool` to enable" in out
    assert "skipped: 1 test: FLAG=1 — run `unset FLAG` to enable" in out


def test_a_run_without_skips_adds_nothing(tmp_path):
    out = run_pytest(tmp_path, NOT_SKIPPING)
    assert "1 passed" in out
    assert "skipped" not in out
