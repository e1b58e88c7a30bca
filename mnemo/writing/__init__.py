"""Turning what the user said into memory: the extractor and what it is
shown of existing notes, the one pipeline every write mode goes through,
applying an extraction, consolidation, and what the agent refuses to
remember (the background writer's runs are the app's: ``nodes.background_writer``).
"""

from mnemo.writing.consolidate import (
    MAX_CONSOLIDATION_CALLS,
    aconsolidate,
)
from mnemo.writing.deferred import (
    DeferredNote,
    adrain,
    amove_legacy,
    aqueue_note,
    defer_note,
    queue_notes,
)
from mnemo.writing.extraction import (
    MemoryExtraction,
    aextract,
    build_extractor,
    extraction_messages,
)
from mnemo.writing.known import MAX_EXISTING_NOTES
from mnemo.writing.offered import refuse_unsaid
from mnemo.writing.pipeline import (
    aextract_messages,
    called_remember,
    pending,
    replied_to,
    stamp_said_at,
)
from mnemo.writing.refusals import (
    refuse_business_record,
)

__all__ = [
    "MAX_CONSOLIDATION_CALLS",
    "MAX_EXISTING_NOTES",
    "DeferredNote",
    "MemoryExtraction",
    "aconsolidate",
    "adrain",
    "aextract",
    "aextract_messages",
    "amove_legacy",
    "aqueue_note",
    "build_extractor",
    "called_remember",
    "defer_note",
    "extraction_messages",
    "pending",
    "queue_notes",
    "refuse_business_record",
    "refuse_unsaid",
    "replied_to",
    "stamp_said_at",
]
