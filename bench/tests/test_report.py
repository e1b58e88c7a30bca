"""``python -m bench report``: docs/bench.md pastes its tables, so over the
committed results every section is there, every table is well formed (each row
as many cells as its header) and a figure reads as its JSON holds it."""

from __future__ import annotations

from bench.common import DEFAULT_OUT, read_json
from bench.report import markdown


def tables(text: str) -> list[list[str]]:
    """The markdown tables of ``text``, each as its lines."""
    found: list[list[str]] = []
    previous = ""
    for line in text.splitlines():
        if line.startswith("|"):
            if not previous.startswith("|"):
                found.append([])
            found[-1].append(line)
        previous = line
    return found


def test_the_committed_results_make_every_section_in_well_formed_tables():
    text = markdown(DEFAULT_OUT)
    titles = [line for line in text.splitlines() if line.startswith("### ")]
    assert titles[:2] == ["### LoCoMo recall", "### LoCoMo: ablations and settings (`python -m bench tune`)"]
    assert any(title.startswith("### Memory quality: ") for title in titles)
    found = tables(text)
    assert len(found) > 8  # the scan sees the tables
    for table in found:
        assert set(table[1].strip("|").split("|")) == {"---"}, table[:2]
        assert {line.count("|") for line in table} == {table[0].count("|")}, table
    grid = read_json(DEFAULT_OUT / "tune.json")["fusion_grid"]
    assert f"shipped (`mnemo.notes.recall.FUSION_K`, `LEXICAL_WEIGHT`): {grid['shipped']}." in text
