"""The README's configuration table (nodes/readme_table.py) is the one the
context's fields make."""

from __future__ import annotations

from nodes.readme_table import README, with_table


def test_the_readme_configuration_table_is_generated_from_the_context_fields():
    readme = README.read_text("utf-8")
    assert "| `recent_limit` | 3 | 0-20 |" in readme  # the table is there, between its markers
    assert with_table(readme) == readme, "stale README table: run python -m nodes.readme_table --write-readme"
