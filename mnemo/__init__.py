"""mnemo: long-term memory for LangGraph agents, as plain functions over ``BaseStore``.

mnemo's one face: applications import from here, and so does this repository's app
(``graphs/``, ``nodes/``, ``server/``, ``web/``); the sub-packages behind it are internal.
Every function takes the store and a :class:`User` built from trusted context (never from a
model or a tool argument) and writes through mnemo's audited paths; everything a user has lives
under the user's label (``docs/memory.md``). The library's API, usable without the graph:

- the store: :func:`open_store`, :func:`open_postgres_store`, :func:`open_checkpointer`, :func:`index_config`;
- who: :class:`User`, :class:`Caller`, :func:`resolve_user`, :func:`user_label`, :func:`mint_token`;
- the profile, merged field by field: :class:`Profile`, :data:`PROFILE_FIELDS`, :func:`aget_profile`,
  :func:`aupdate_profile`;
- notes: :class:`Note`, :func:`aremember`, :func:`aremember_many`, :func:`arecall` (real hits only;
  :class:`IndexMissingError` without an index), :func:`arecent`, :func:`alist_notes`, :func:`aforget`;
- policies: :data:`POLICIES_NAMESPACE`, :func:`load_policy_file`, :func:`aseed_policies`,
  :func:`aensure_policies`, :func:`asearch_policies`;
- extraction: :class:`MemoryExtraction`, :func:`build_extractor`, :func:`aextract`.

Its other names are what the app is built from (the turn's snapshot and prompt, bounds, the
run's models, the background writer), not a promise to applications.

Example::

    from mnemo import User, aget_profile, arecall, aremember, aupdate_profile, open_store

    async with open_store() as store:  # in memory unless given a PostgreSQL URI
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

Errors are :class:`MnemoError` subclasses that say what to change (:class:`InvalidInputError`,
:class:`MissingUserError`, :class:`MessageTooLongError`, :class:`NoteLimitError`, :class:`DimsMismatchError`,
:class:`EmbeddedPostgresError`, :class:`ListingChangedError`, :class:`UnstorableValueError`: a value
PostgreSQL cannot keep, on every backend; :class:`StoreClosedError`, :class:`StoreOperationError`);
:class:`StoreUnavailableError` means nothing was done and a retry may succeed.
"""

from mnemo.access import mint_token
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
from mnemo.stores import index_config, open_checkpointer, open_postgres_store, open_store
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
    "index_config",
    "load_policy_file",
    "mint_token",
    "open_checkpointer",
    "open_postgres_store",
    "open_store",
    "resolve_user",
    "user_label",
]
