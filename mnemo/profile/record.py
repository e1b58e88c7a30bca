"""The user's profile: a few fields that must be right, merged, never clobbered.

One store item per field in ``(user_label, "profile")``; :func:`aupdate_profile`
never erases by omission, keeps provenance and history, lets ``user_said`` outrank
``inferred``, and never lets a late writer overwrite a newer value (``as_of``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, NotRequired, TypedDict, cast, get_args

from langgraph.store.base import BaseStore, Op, PutOp, Result

from mnemo.audit import SOURCES, Origin, Source, abatch_audited, audit_op, default_origin, head_op, stated
from mnemo.core import (
    PROFILE,
    Ask,
    InvalidInputError,
    Part,
    User,
    alist_all,
    alist_rest,
    check_storable_text,
    collapse_whitespace,
    list_op,
    now_iso,
    quote,
    search_result,
)
from mnemo.profile.address import is_no_town, is_street_address
from mnemo.profile.languages import is_language, language_code, language_label

#: The profile's fields: the one list (the extractor's schema is built from it,
#: with :data:`FIELD_PROMPTS`, :data:`FIELD_CHOICES` and :data:`FIELD_MAX_CHARS`).
ProfileField = Literal["name", "city", "language", "response_style"]
PROFILE_FIELDS: tuple[str, ...] = get_args(ProfileField)

ResponseStyle = Literal["concise", "detailed", "bullets"]
RESPONSE_STYLES: tuple[str, ...] = get_args(ResponseStyle)

#: What the extractor is asked of each field (its schema is built from these).
FIELD_PROMPTS: dict[str, str] = {
    "name": "The user's own name (用户本人的名字), only if the user said it; never a place, a pronoun (myself, "
    "自己, 本人) or another person's name.",
    "city": "The city where the user lives now (用户现在住的城市), only if the user said it: after a move or a "
    "correction the new one; never a relative's city, one in a question or a wish, a place the user is only "
    "visiting (旅游, 出差: a temporary note), nor a street address or its town (地址, 路, 号: a note).",
    "language": "Language the user wants answers in (希望用哪种语言回答), e.g. 'zh', 'en', 'es', only if stated or "
    "obvious from a request ('answer me in Spanish', '用英文回复我').",
    "response_style": "How the user wants answers (回答风格): 'concise' (short, no fluff; 简短), 'detailed' "
    "(详细) or 'bullets' (bullet points, no paragraphs; 分点). Only if the user asked.",
}
#: A field's values when not free text (the extractor's schema says them).
FIELD_CHOICES: dict[str, Any] = {"response_style": ResponseStyle}
#: Fields whose value is the user's own words: extracted, one is kept only when
#: every word of it is in what the user said (:mod:`mnemo.writing.grounding`).
#: ``language`` may be inferred from how the user writes, a choice is not words.
SAID_FIELDS: frozenset[str] = frozenset({"name", "city"})

#: Higher outranks lower: a value is replaced only by a source of at least its rank.
#: What an application set and what the user says rank alike: the later
#: statement wins either way, and an inference replaces neither (docs/memory.md).
SOURCE_RANK: dict[str, int] = {"inferred": 0, "tool": 1, "user_said": 1, "app": 1}

#: Former values kept per field.
MAX_HISTORY = 10

#: Longest accepted value of a profile field, in characters.
MAX_FIELD_CHARS = 200
#: A free-text field's ``maxLength`` in the extractor's schema where it is not
#: :data:`MAX_FIELD_CHARS` (a longer extracted value is cut to it:
#: :mod:`mnemo.models.bounds`). A language is a tag or a name ("zh", "Brazilian Portuguese").
FIELD_MAX_CHARS: dict[str, int] = {"language": 35}


class HistoryEntry(TypedDict):
    value: str
    source: Source
    until: str
    """When this value was replaced."""


class ProfileEntry(TypedDict):
    """One field of the profile as stored, with its provenance."""

    value: str
    source: Source
    first_seen: str
    updated_at: str
    history: NotRequired[list[HistoryEntry]]
    """Former values, oldest first."""


Profile = dict[str, ProfileEntry]
"""Field name -> entry; a field that is unknown is absent (never ``None``)."""


class ProfileChange(TypedDict):
    field: str
    before: str | None
    after: str | None


# Words a model uses for "I don't know" that must never overwrite a real value.
_NOT_MENTIONED = {
    "",
    "none",
    "null",
    "n/a",
    "na",
    "unknown",
    "not mentioned",
    "not provided",
    "not specified",
    "unspecified",
    "未知",
    "未提及",
    "无",
    "没有",
    "不详",
    "未说明",
}

#: Words that ask for each answer style (the extractor's choice is kept only
#: when the user said one: :mod:`mnemo.writing.grounding`).
STYLE_WORDS: dict[str, tuple[str, ...]] = {
    "concise": ("concise", "brief", "short", "terse", "succinct", "简洁", "简短", "简单", "啰嗦", "简明"),
    "detailed": ("detailed", "verbose", "thorough", "long", "in depth", "in-depth", "详细", "具体", "详尽"),
    "bullets": ("bullets", "bullet", "bulleted", "point form", "分点", "列表", "条目"),
}


def normalize_field(field: str, value: Any) -> str | None:
    """Canonical form of ``value`` for ``field``, or ``None`` for "not mentioned".

    Raises:
        InvalidInputError: unknown field, non-string value, value too long, or
            a ``response_style`` outside :data:`RESPONSE_STYLES`, a ``language``
            that names none ("the user's preferred language": a small model's answer).
    """
    if field not in PROFILE_FIELDS:
        raise InvalidInputError(f"unknown profile field {field!r}; known: {', '.join(PROFILE_FIELDS)}")
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidInputError(f"profile field {field!r} takes a string, got {type(value).__name__}")
    text = collapse_whitespace(value)
    check_storable_text(text, f"profile field {field!r}")
    if text.casefold() in _NOT_MENTIONED:
        return None
    if len(text) > MAX_FIELD_CHARS:
        raise InvalidInputError(f"profile field {field!r} is {len(text)} characters; the limit is {MAX_FIELD_CHARS}")
    folded = text.casefold()
    if field == "response_style":
        for style, words in STYLE_WORDS.items():
            if folded in words or any(w in folded for w in words if len(w) > 3 or not w.isascii()):
                return style
        raise InvalidInputError(f"response_style must be one of {RESPONSE_STYLES}, got {text!r}")
    if field == "city" and is_street_address(text):
        raise InvalidInputError(
            f"profile field 'city' is the city's name, not a street address or a number ({text!r}): "
            "an address is a note (remember it, with its end date if it has one)"
        )
    if field == "city" and is_no_town(text):
        raise InvalidInputError(
            f"profile field 'city' is the city's name, not home, here or a place in a town ({text!r})"
        )
    if field == "language":
        if (code := language_code(folded)) is not None:
            return code
        if not is_language(folded):
            raise InvalidInputError(
                f"profile field 'language' is a language's name or code ('es', 'Spanish', '西班牙语'), got {text!r}"
            )
        return folded
    return text


async def aget_profile(store: BaseStore, user: User) -> Profile:
    """The whole profile (possibly empty). One listing, no ``get`` (no ghosts)."""
    items = await alist_all(store, user.namespace(PROFILE))
    return profile_from_items(items)


def profile_from_items(items: Iterable[Any]) -> Profile:
    """Build a :data:`Profile` from profile items already fetched (e.g. in a batch)."""
    return {
        it.key: cast(ProfileEntry, it.value) for it in items if it.key in PROFILE_FIELDS and isinstance(it.value, dict)
    }


def _part_ops(ask: Ask) -> list[Op]:
    return [list_op(ask.user.namespace(PROFILE))]


async def _part(store: BaseStore, ask: Ask, results: Sequence[Result]) -> Profile:
    return profile_from_items(await alist_rest(store, ask.user.namespace(PROFILE), search_result(results[0])))


#: The snapshot's ``profile``: the whole profile, always read.
PROFILE_PART = Part("profile", _part_ops, _part)


def plan_profile_update(
    namespace: tuple[str, ...],
    current: Profile,
    changes: Mapping[str, Any],
    *,
    forget: Iterable[str] = (),
    source: Source,
    now: str | None = None,
    as_of: str | None = None,
    sources: Mapping[str, Source] | None = None,
) -> tuple[list[PutOp], list[ProfileChange]]:
    """Pure part of :func:`aupdate_profile`: the writes needed, and what changes;
    ``sources``: a field's own source where it is not ``source`` (a language
    ``inferred`` from the user's script beside what they stated).

    Raises:
        InvalidInputError: on any invalid field or value, before anything is
            planned (all or nothing).
    """
    if source not in SOURCES:
        raise InvalidInputError(f"source must be one of {SOURCES}, got {source!r}")
    forget = set(forget)
    for field in forget:
        normalize_field(field, None)  # validates the name
    normalized = {f: normalize_field(f, v) for f, v in changes.items()}
    stamp = now or now_iso()
    ops: list[PutOp] = []
    diff: list[ProfileChange] = []
    for field in PROFILE_FIELDS:
        before = current.get(field)
        old_value = before["value"] if before else None
        if before is not None and as_of is not None and before.get("updated_at", "") > as_of:
            continue  # changed after the messages this update comes from
        if field in forget:
            if before is not None:
                ops.append(PutOp(namespace, field, None))
                diff.append(ProfileChange(field=field, before=old_value, after=None))
            continue
        new_value, field_source = normalized.get(field), (sources or {}).get(field, source)
        if new_value is None or new_value == old_value:
            continue
        if before is not None and SOURCE_RANK[field_source] < SOURCE_RANK.get(before.get("source", "user_said"), 1):
            continue  # an inference never replaces what the user stated
        entry = ProfileEntry(
            value=new_value,
            source=field_source,
            first_seen=before["first_seen"] if before else stamp,
            updated_at=stamp,
        )
        if before is not None and old_value is not None:
            old = HistoryEntry(value=old_value, source=before.get("source", "user_said"), until=stamp)
            entry["history"] = [*before.get("history", []), old][-MAX_HISTORY:]
        ops.append(PutOp(namespace, field, dict(entry), index=False))
        diff.append(ProfileChange(field=field, before=old_value, after=new_value))
    return ops, diff


async def aupdate_profile(
    store: BaseStore,
    user: User,
    changes: Mapping[str, Any],
    *,
    forget: Iterable[str] = (),
    source: Source = "user_said",
    origin: Origin | None = None,
    as_of: str | None = None,
) -> list[ProfileChange]:
    """Merge ``changes`` into the profile; delete the fields in ``forget``.

    ``as_of``: UTC ISO time of the newest message the changes come from;
    fields updated after it are left alone (see the module docstring).

    Returns the changes actually made (empty when nothing changed, in which
    case nothing was written). One listing (the audit chain's head read with
    it) plus one batched write, which also
    appends one audit record per change (:mod:`mnemo.audit`; ``origin``
    defaults to ``source``, with ``inferred`` recorded as ``extractor``).
    """
    ops, diff, head = await aprofile_ops(store, user, changes, forget=forget, source=source, origin=origin, as_of=as_of)
    if ops:
        await abatch_audited(store, ops, heads={user.label: head})
    return diff


async def aprofile_ops(
    store: BaseStore,
    user: User,
    changes: Mapping[str, Any],
    *,
    forget: Iterable[str] = (),
    source: Source = "user_said",
    origin: Origin | None = None,
    as_of: str | None = None,
) -> tuple[list[PutOp], list[ProfileChange], Result]:
    """The write :func:`aupdate_profile` makes, not made: the profile's puts
    with their audit records (none when nothing changes), the changes, and the
    audit chain's head read with the listing; for a caller that writes them in
    one batch with writes of its own (:func:`abatch_audited`)."""
    # The listing's first page and the audit chain's head in one round trip.
    head, first = await store.abatch([head_op(user), list_op(user.namespace(PROFILE))])
    current = profile_from_items(await alist_rest(store, user.namespace(PROFILE), search_result(first)))
    ops, diff = plan_profile_update(
        user.namespace(PROFILE), current, changes, forget=forget, source=source, as_of=as_of
    )
    if ops:
        ops += profile_audit_ops(user, diff, origin or default_origin(source))
    return ops, diff, head


def profile_audit_ops(user: User, diff: Iterable[ProfileChange], origin: Origin) -> list[PutOp]:
    """One audit record per change, to write in the same batch as the change."""
    return [
        audit_op(
            user,
            origin,
            "profile.delete" if c["after"] is None else "profile.set",
            c["field"],
            before=c["before"],
            after=c["after"],
        )
        for c in diff
    ]


def format_profile(profile: Profile) -> str:
    """The profile as prompt text; says so explicitly when there is none.
    Every stored value is quoted data (:func:`mnemo.core.quoting.quote`); a language's
    code is followed by its name (``"es" (Spanish)``), which a small model knows better;
    who stated it and since when as a note's line says it (``("said 2026-12-06")``)."""
    if not profile:
        return "(no profile yet: nothing is known about this user; do not guess)"
    return "\n".join(
        f"- {field}: {quote(entry.get('value', ''))}{_named(field, entry.get('value'))}  "
        f"({quote(stated(entry.get('source'), entry.get('first_seen')))})"
        for field in PROFILE_FIELDS
        if (entry := profile.get(field)) is not None
    )


def _named(field: str, value: Any) -> str:
    """`` (Spanish)`` after a known language code (:func:`mnemo.profile.languages.language_label`), else nothing."""
    name = language_label(value) if field == "language" and isinstance(value, str) else None
    return f" ({name})" if name else ""
