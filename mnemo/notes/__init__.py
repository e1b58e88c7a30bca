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
    "aapply_revisions",
    "adelete_notes",
    "aforget",
    "aget_note",
    "alist_notes",
    "aread_notes",
    "arebuild",
    "arestamp",
    "arecall",
    "arecent",
    "arestore",
    "note_value",
    "same_note",
    "aremember",
    "aremember_many",
    "arevise",
    "asweep_user",
    "expiry_from",
    "is_expired",
    "MAX_NOTE_CHARS",
    "MAX_NOTES_PER_TURN",
    "MAX_NOTES_PER_USER",
    "Note",
    "note_dates",
    "live",
    "plan_revision",
    "Revision",
    "revision_terms",
    "NotesPlan",
    "now",
    "RECALL_MARGIN",
    "RememberResult",
    "to_note",
    "validate_context",
    "validate_note",
    "validate_refers_to",
]
