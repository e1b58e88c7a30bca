"""Notes: loose facts about a user, one item each; how they are written
(deduplicated, capped, audited), indexed by words, recalled, and expired.
"""

from mnemo.notes.bulk import aremember_bulk
from mnemo.notes.expiry import (
    adelete_notes,
    asweep_user,
    expiry_from,
    is_expired,
    live,
    now,
    parse_expiry,
)
from mnemo.notes.forget import (
    aforget,
    aforget_about,
)
from mnemo.notes.index import (
    arebuild,
)
from mnemo.notes.model import (
    MAX_NOTE_CHARS,
    MAX_NOTES_PER_TURN,
    MAX_NOTES_PER_USER,
    Note,
    NoteHistoryEntry,
    RememberResult,
    alist_notes,
    arecent,
    note_dates,
    to_note,
    validate_context,
    validate_note,
    validate_refers_to,
)
from mnemo.notes.plan import NotesPlan
from mnemo.notes.queued import MAX_QUEUED_NOTES, QUEUED_PART
from mnemo.notes.recall import (
    RECALL_MARGIN,
    aread_notes,
    arecall,
)
from mnemo.notes.restore import arestore, note_value, same_note
from mnemo.notes.revise import Revision, aapply_revisions, aget_note, arevise, plan_revision, revision_terms
from mnemo.notes.similar import SIMILAR_PART
from mnemo.notes.sparse_vectors import (
    arestamp,
    astamp,
)
from mnemo.notes.writes import (
    aat_note_cap,
    aremember,
    aremember_many,
)

__all__ = [
    "MAX_NOTES_PER_TURN",
    "MAX_NOTES_PER_USER",
    "MAX_NOTE_CHARS",
    "MAX_QUEUED_NOTES",
    "QUEUED_PART",
    "RECALL_MARGIN",
    "SIMILAR_PART",
    "Note",
    "NoteHistoryEntry",
    "NotesPlan",
    "RememberResult",
    "Revision",
    "aapply_revisions",
    "aat_note_cap",
    "adelete_notes",
    "aforget",
    "aforget_about",
    "aget_note",
    "alist_notes",
    "aread_notes",
    "arebuild",
    "arecall",
    "arecent",
    "aremember",
    "aremember_bulk",
    "aremember_many",
    "arestamp",
    "arestore",
    "arevise",
    "astamp",
    "asweep_user",
    "expiry_from",
    "is_expired",
    "live",
    "note_dates",
    "note_value",
    "now",
    "parse_expiry",
    "plan_revision",
    "revision_terms",
    "same_note",
    "to_note",
    "validate_context",
    "validate_note",
    "validate_refers_to",
]
