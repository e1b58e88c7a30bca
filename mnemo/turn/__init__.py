"""What one turn of the agent is shown: the memory snapshot of its user,
and the window of a long thread (summary and trimming).
"""

from mnemo.turn.explain import aexplain, summary_lines
from mnemo.turn.history import (
    MAX_SUMMARY_CHARS,
    MAX_TOOL_ROUNDS,
    asummarize,
    fit_to_budget,
    plan_compaction,
    tool_rounds,
)
from mnemo.turn.parts import prompt_blocks, settings_of, slots
from mnemo.turn.snapshot import (
    MEMORY_CHAR_BUDGET,
    RECALL_LIMIT,
    RECENT_LIMIT,
    aload_snapshot,
    note_line,
    render_blocks,
    render_snapshot,
)

__all__ = [
    "MAX_SUMMARY_CHARS",
    "MAX_TOOL_ROUNDS",
    "MEMORY_CHAR_BUDGET",
    "RECALL_LIMIT",
    "RECENT_LIMIT",
    "aexplain",
    "aload_snapshot",
    "asummarize",
    "fit_to_budget",
    "note_line",
    "plan_compaction",
    "prompt_blocks",
    "render_blocks",
    "render_snapshot",
    "settings_of",
    "slots",
    "summary_lines",
    "tool_rounds",
]
