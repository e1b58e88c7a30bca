"""Notes: loose facts about a user, one item each; how they are written
(deduplicated, capped, audited), indexed by words, recalled, and expired.
"""

from mnemo.notes.expiry import (
    adelete_notes,
    asweep_user,
    expiry_from,
    is_expired,
    live,
    now,
)
from mnemo.notes.index import (
    arebuild,
)
from mnemo.notes.model import (
    MAX_NOTE_CHARS,
    MAX_NOTES_PER_TURN,
    MAX_NOTES_PER_USER,
    Note,
    RememberResult,
    aforget,
    alist_notes,
    arecent,
    note_dates,
    to_note,
    validate_context,
    validate_note,
    validate_refers_to,
)
from mnemo.notes.plan import NotesPlan
from mnemo.notes.recall import (
    RECALL_MARGIN,
    aread_notes,
    arecall,
)
from mnemo.notes.restore import arestore, note_value, same_note
from mnemo.notes.revise import Revision, aapply_revisions, aget_note, arevise, plan_revision, revision_terms
from mnemo.notes.sparse import arestamp
from mnemo.notes.writes import (
    aremember,
    aremember_many,
)

__all__ = [
    "MAX_NOTES_PER_TURN",
    "MAX_NOTES_PER_USER",
    "MAX_NOTE_CHARS",
    "RECALL_MARGIN",
    "Note",
    "NotesPlan",
    "RememberResult",
    "Revision",
    "aapply_revisions",
    "adelete_notes",
    "aforget",
    "aget_note",
    "alist_notes",
    "aread_notes",
    "arebuild",
    "arecall",
    "arecent",
    "aremember",
    "aremember_many",
    "arestamp",
    "arestore",
    "arevise",
    "asweep_user",
    "expiry_from",
    "is_expired",
    "live",
    "note_dates",
    "note_value",
    "now",
    "plan_revision",
    "revision_terms",
    "same_note",
    "to_note",
    "validate_context",
    "validate_note",
    "validate_refers_to",
]
