"""mnemo: long-term memory for LangGraph agents, as plain functions over ``BaseStore``.

The library's face: applications import from here, and every name here is the API
below; the sub-packages behind it are internal. This repository's app (``graphs/``,
``nodes/``, ``server/``, ``web/``) imports :mod:`mnemo.app`, its own face.
Every function takes the store and a :class:`User` built from trusted context (never from a
model or a tool argument) and writes through mnemo's audited paths. The API:

- the store: :func:`open_store`, :func:`open_postgres_store`, :func:`open_checkpointer`, :func:`index_config`;
- who: :class:`User`, :func:`mint_token` (a client's token for mnemo's server);
- the profile, merged: :class:`Profile`, :data:`PROFILE_FIELDS`, :func:`aget_profile`, :func:`aupdate_profile`;
- notes: :class:`Note`, :func:`aremember`, :func:`aremember_many`, :func:`aremember_bulk` (a backfill;
  :class:`PartialWriteError` says what was written), :func:`arecall` (real hits only;
  :class:`IndexMissingError` without an index), :func:`arecent`, :func:`alist_notes`, :func:`aforget`,
  :func:`aforget_about`;
- a user's data whole: :func:`aexport_user`, :func:`aimport_user` (its :class:`Origin` says who wrote);
- policies: :data:`POLICIES_NAMESPACE`, :func:`load_policy_file`, :func:`aseed_policies`,
  :func:`aensure_policies`, :func:`asearch_policies`;
- extraction: :class:`MemoryExtraction`, :func:`build_extractor`, :func:`aextract`.

Example::

    from mnemo import User, arecall, aremember, aupdate_profile, open_store

    async with open_store() as store:  # in memory unless given a PostgreSQL URI
        user = User.of("zhou.wang@example.com")
        await aupdate_profile(store, user, {"name": "Zhou", "city": "Hangzhou"})
        await aremember(store, user, "Allergic to peanuts.")
        assert (await arecall(store, user, "what can't they eat?"))[0]["text"] == "Allergic to peanuts."

Errors are :class:`MnemoError` subclasses that say what to change (:class:`InvalidInputError`,
:class:`MissingUserError`, :class:`MessageTooLongError`, :class:`NoteLimitError`, :class:`DimsMismatchError`,
:class:`EmbeddedPostgresError`, :class:`ListingChangedError`, :class:`UnstorableValueError`,
:class:`StoreClosedError`, :class:`StoreOperationError`, :class:`ModelUnavailableError`: the chat model
as configured); :class:`StoreUnavailableError` means nothing was done and a retry may succeed.
"""

from mnemo.access import aexport_user, aimport_user, mint_token
from mnemo.audit import Origin
from mnemo.core import (
    POLICIES_NAMESPACE,
    DimsMismatchError,
    EmbeddedPostgresError,
    IndexMissingError,
    InvalidInputError,
    ListingChangedError,
    MessageTooLongError,
    MissingUserError,
    MnemoError,
    ModelUnavailableError,
    NoteLimitError,
    PartialWriteError,
    StoreClosedError,
    StoreOperationError,
    StoreUnavailableError,
    UnstorableValueError,
    User,
)
from mnemo.notes import (
    Note,
    aforget,
    aforget_about,
    alist_notes,
    arecall,
    arecent,
    aremember,
    aremember_bulk,
    aremember_many,
)
from mnemo.policies import aensure_policies, asearch_policies, aseed_policies, load_policy_file
from mnemo.profile import PROFILE_FIELDS, Profile, aget_profile, aupdate_profile
from mnemo.stores import index_config, open_checkpointer, open_postgres_store, open_store
from mnemo.writing import MemoryExtraction, aextract, build_extractor

__all__ = [
    "POLICIES_NAMESPACE",
    "PROFILE_FIELDS",
    "DimsMismatchError",
    "EmbeddedPostgresError",
    "IndexMissingError",
    "InvalidInputError",
    "ListingChangedError",
    "MemoryExtraction",
    "MessageTooLongError",
    "MissingUserError",
    "MnemoError",
    "ModelUnavailableError",
    "Note",
    "NoteLimitError",
    "Origin",
    "PartialWriteError",
    "Profile",
    "StoreClosedError",
    "StoreOperationError",
    "StoreUnavailableError",
    "UnstorableValueError",
    "User",
    "aensure_policies",
    "aexport_user",
    "aextract",
    "aforget",
    "aforget_about",
    "aget_profile",
    "aimport_user",
    "alist_notes",
    "arecall",
    "arecent",
    "aremember",
    "aremember_bulk",
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
]
