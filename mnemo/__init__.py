"""mnemo: long-term memory for LangGraph agents, as plain functions over ``BaseStore``.

Kinds of memory and where they live (the user always first, so ``(label,)``
prefixes everything a user has):

=====================  ========================================  ==========================
kind                   namespace                                 module
=====================  ========================================  ==========================
profile                ``(user_label, "profile")``               :mod:`mnemo.kinds.profile`
notes (time-bound too) ``(user_label, "notes")``                 :mod:`mnemo.notes.model`, :mod:`mnemo.notes.expiry`
episodes               ``(user_label, "episodes")``              :mod:`mnemo.kinds.episodes`
audit trail            ``(user_label, "audit")``                 :mod:`mnemo.kinds.audit`
entitlements           ``(user_label, "entitlements")``          :mod:`mnemo.access.entitlements`
tool usage             ``(user_label, "usage")``                 :mod:`mnemo.access.entitlements`
shared exemplars       ``("org", "episodes")``                   :mod:`mnemo.kinds.episodes`
learned instructions   ``("org", "instructions", assistant)``    :mod:`mnemo.kinds.instructions`
shared policies        ``("org", "policies")``                   :mod:`mnemo.kinds.policies`
=====================  ========================================  ==========================

Writing: :mod:`mnemo.writing.pipeline` (one extraction pipeline for every write mode),
:mod:`mnemo.writing.background` (the ``memory_writer`` run), :mod:`mnemo.turn.history`
(long threads: summary and trimming, thread state only).

Export and erase of everything a user has: :mod:`mnemo.access.privacy`; the
operator commands: ``python -m mnemo`` (:mod:`mnemo.cli`).

``user_label`` is the user id, or a hash of it when the id is not a valid
namespace label (:mod:`mnemo.core.identity`).
"""

from mnemo.core import (
    POLICIES_NAMESPACE,
    Caller,
    DimsMismatchError,
    EmbeddedPostgresError,
    IndexMissingError,
    InvalidInputError,
    ListingChangedError,
    MessageTooLongError,
    MissingUserError,
    MnemoError,
    NoteLimitError,
    StoreClosedError,
    UnstorableValueError,
    User,
    resolve_user,
    user_label,
)
from mnemo.kinds import (
    PROFILE_FIELDS,
    Profile,
    aensure_policies,
    aget_profile,
    asearch_policies,
    aseed_policies,
    aupdate_profile,
    load_policy_file,
)
from mnemo.notes import Note, aforget, alist_notes, arecall, arecent, aremember, aremember_many
from mnemo.writing import MemoryExtraction, aextract, build_extractor

__all__ = [
    "Caller",
    "DimsMismatchError",
    "EmbeddedPostgresError",
    "IndexMissingError",
    "InvalidInputError",
    "ListingChangedError",
    "MemoryExtraction",
    "MessageTooLongError",
    "MissingUserError",
    "MnemoError",
    "NoteLimitError",
    "Note",
    "POLICIES_NAMESPACE",
    "PROFILE_FIELDS",
    "Profile",
    "StoreClosedError",
    "UnstorableValueError",
    "User",
    "aensure_policies",
    "aextract",
    "aforget",
    "aget_profile",
    "alist_notes",
    "arecall",
    "arecent",
    "aremember",
    "aremember_many",
    "aseed_policies",
    "asearch_policies",
    "aupdate_profile",
    "build_extractor",
    "load_policy_file",
    "resolve_user",
    "user_label",
]
