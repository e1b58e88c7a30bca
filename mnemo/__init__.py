"""mnemo: long-term memory for LangGraph agents, as plain functions over ``BaseStore``.

This module is the library's API: what an application calls without the graph.
Every function takes the store and a :class:`User` built from trusted context
(never from a model or a tool argument), and writes through mnemo's audited
paths. Every kind of memory lives under the user's label first, so ``(label,)``
prefixes everything a user has; the kinds and their namespaces: ``docs/memory.md``.

Contracts that the stock store leaves as traps:

- a profile update merges field by field; a value not mentioned is kept, and a
  field is removed only when named in ``forget`` (``put`` would replace it all);
- listings read every page (no silent ``limit=10``) in one order on every backend;
- a recall asks the store's vector index and raises :class:`IndexMissingError`
  when there is none (a ``query`` without an index is otherwise ignored), and
  keeps real hits only (a ``score`` of ``None`` is filler);
- a label may hold anything a user id holds (``.`` in an email included), and a
  value PostgreSQL cannot store is refused on every backend alike
  (:class:`UnstorableValueError`).

Example::

    from mnemo import User, aget_profile, arecall, aremember, aupdate_profile
    from mnemo.stores.factory import open_store  # in memory unless given a PostgreSQL URI

    async with open_store() as store:
        user = User.of("zhou.wang@example.com")
        await aupdate_profile(store, user, {"name": "Zhou", "city": "Hangzhou"})
        await aupdate_profile(store, user, {"language": "zh"})  # name and city are kept
        profile = await aget_profile(store, user)
        assert profile["city"]["value"] == "Hangzhou" and profile["city"]["source"] == "user_said"

        await aremember(store, user, "Allergic to peanuts.")
        again = await aremember(store, user, "allergic to peanuts")
        assert again["status"] == "duplicate"  # the same fact is kept once
        hits = await arecall(store, user, "what can't they eat?")
        assert hits[0]["text"] == "Allergic to peanuts."

Errors are :class:`MnemoError` subclasses that say what to change;
:class:`StoreUnavailableError` means nothing was done and a retry may succeed.
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
    "POLICIES_NAMESPACE",
    "PROFILE_FIELDS",
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
    "Note",
    "NoteLimitError",
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
    "asearch_policies",
    "aseed_policies",
    "aupdate_profile",
    "build_extractor",
    "load_policy_file",
    "resolve_user",
    "user_label",
]
