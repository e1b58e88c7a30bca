"""mnemo: long-term memory for LangGraph agents, as plain functions over ``BaseStore``.

Kinds of memory and where they live (the user always first, so ``(label,)``
prefixes everything a user has):

=====================  ========================================  ==========================
kind                   namespace                                 module
=====================  ========================================  ==========================
profile                ``(user_label, "profile")``               :mod:`mnemo.profile`
notes (time-bound too) ``(user_label, "notes")``                 :mod:`mnemo.notes`, :mod:`mnemo.expiry`
episodes               ``(user_label, "episodes")``              :mod:`mnemo.episodes`
audit trail            ``(user_label, "audit")``                 :mod:`mnemo.audit`
entitlements           ``(user_label, "entitlements")``          :mod:`mnemo.entitlements`
tool usage             ``(user_label, "usage")``                 :mod:`mnemo.entitlements`
shared exemplars       ``("org", "episodes")``                   :mod:`mnemo.episodes`
learned instructions   ``("org", "instructions", assistant)``    :mod:`mnemo.instructions`
shared policies        ``("org", "policies")``                   :mod:`mnemo.policies`
=====================  ========================================  ==========================

Writing: :mod:`mnemo.writer` (one extraction pipeline for every write mode),
:mod:`mnemo.background` (the ``memory_writer`` run), :mod:`mnemo.history`
(long threads: summary and trimming, thread state only).

Export and erase of everything a user has: :mod:`mnemo.privacy`; the
operator commands: ``python -m mnemo`` (:mod:`mnemo.cli`).

``user_label`` is the user id, or a hash of it when the id is not a valid
namespace label (:mod:`mnemo.identity`).
"""

from mnemo.errors import (
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
)
from mnemo.extraction import MemoryExtraction, aextract, build_extractor
from mnemo.identity import POLICIES_NAMESPACE, User, resolve_user, user_label
from mnemo.notes import Note, aforget, alist_notes, arecent, aremember, aremember_many
from mnemo.policies import aensure_policies, asearch_policies, aseed_policies, load_policy_file
from mnemo.profile import PROFILE_FIELDS, Profile, aget_profile, aupdate_profile
from mnemo.recall import arecall

__all__ = [
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
