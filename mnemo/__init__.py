"""mnemo: long-term memory for LangGraph agents, as plain functions over ``BaseStore``.

Every kind of memory lives under the user's label first, so ``(label,)`` prefixes
everything a user has; the kinds, their namespaces and modules: ``docs/memory.md``.
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
    StoreOperationError,
    StoreUnavailableError,
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
    "StoreOperationError",
    "StoreUnavailableError",
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
