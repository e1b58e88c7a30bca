"""Every store namespace mnemo uses, named once.

A user's memory is ``(user_label, KIND)`` (:meth:`mnemo.core.identity.User.namespace`);
shared knowledge is under :data:`SHARED_ROOT`. Modules import these names; no
namespace is spelled as a string literal anywhere else.
"""

from __future__ import annotations

#: Root of shared, organisation-wide knowledge (read by every user, written by admins).
SHARED_ROOT = "org"
#: Root of the admins' own records (no user reads under it): the history of the
#: shared learned instructions, which says who approved each version.
ADMIN_ROOT = "mnemo"

# Kinds under a user's label.
PROFILE = "profile"
NOTES = "notes"
#: Notes the user said are no longer true: out of recall and the prompt, in the export.
INVALIDATED_NOTES = "notes_invalidated"
NOTE_INDEX = "note_index"
#: Notes ``remember_note`` acknowledged and ``write_memory`` has not written yet
#: (``mnemo.writing.deferred``): in the store, where a rollback of the run cannot take them.
QUEUED_NOTES = "notes_queued"
EPISODES = "episodes"
AUDIT = "audit"
#: The head of a user's audit chain: the place and digest of its last record.
AUDIT_HEAD = "audit_head"
ENTITLEMENTS = "entitlements"
USAGE = "usage"
#: The user's own learned instructions (how the agent treats them), versioned.
INSTRUCTIONS = "instructions"
#: The user's proposals of shared instructions, pending until an admin decides.
PROPOSALS = "proposals"
#: The application's own items (the only kind raw store writes may change).
APP = "app"

# Kinds under the shared root.
POLICIES = "policies"
# INSTRUCTIONS as well: ``(SHARED_ROOT, INSTRUCTIONS, <assistant>)`` holds the
# approved text alone; its history is under ADMIN_ROOT.

#: Shared, read-only organisation knowledge.
POLICIES_NAMESPACE: tuple[str, ...] = (SHARED_ROOT, POLICIES)
#: Shared exemplars (episodes an admin promoted, without personal data).
SHARED_EPISODES_NAMESPACE: tuple[str, ...] = (SHARED_ROOT, EPISODES)

#: Roots used by shared namespaces (and by the platform). A user with one of
#: these ids is mapped, so a prefix search over the user's data can never reach
#: shared data.
RESERVED_ROOTS = frozenset({SHARED_ROOT, ADMIN_ROOT, "agent", "langgraph"})
