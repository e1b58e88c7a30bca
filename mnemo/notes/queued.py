"""The snapshot's ``queued`` part: how many notes wait in the user's queue
(``(label, QUEUED_NOTES)``, written by ``mnemo.writing.deferred``) when a turn
begins, read in the snapshot's one batch, so that ``write_memory`` reads the
queue only on a turn that has something to write (no round trip otherwise)."""

from __future__ import annotations

from collections.abc import Sequence

from langgraph.store.base import BaseStore, Op, Result, SearchOp

from mnemo.core import QUEUED_NOTES, Ask, Part, search_result
from mnemo.notes.model import MAX_NOTES_PER_TURN

#: Queue entries a read takes at most (a turn's drain too); the rest wait for the next turn.
MAX_QUEUED_NOTES = 4 * MAX_NOTES_PER_TURN


def queue_op(ask: Ask) -> list[Op]:
    return [SearchOp(ask.user.namespace(QUEUED_NOTES), limit=MAX_QUEUED_NOTES)]


async def _count(store: BaseStore, ask: Ask, results: Sequence[Result]) -> int:
    return len(search_result(results[0])) if results else 0


#: The snapshot's ``queued``: the number of queued notes (none on a user who never had one).
QUEUED_PART = Part("queued", queue_op, _count)
