"""A LoCoMo conversation written for the benchmark (:mod:`bench.locomo`):
every dialog turn a note of one user through mnemo's own write path
(:func:`mnemo.aremember_many`, one call per turn, each with the turn before
it as its context), and the same turns in the memory-agent template's layout;
the turns each note is credited for (:func:`credited`).
"""

from __future__ import annotations

import time
import uuid
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any

from langgraph.store.base import PutOp
from langgraph.store.base.embed import get_text_at_path
from langgraph.store.memory import InMemoryStore

from bench.common import CachingEmbeddings, progress
from bench.locomo_data import Conversation

#: Seconds spent per step, summed over conversations.
Timing = defaultdict[str, float]


def stored_text(text: str) -> str:
    """The note text mnemo stores for ``text`` (whitespace collapsed), so the
    embedding cache is warmed with exactly what the store will embed."""
    from mnemo.notes import validate_note

    return validate_note(text[:1000])


def memory_agent_value(text: str) -> dict[str, str]:
    """A memory as the memory-agent template stores it. ``context`` is what
    its model would add ("mentioned while ..."); the benchmark leaves it
    empty so both methods see the same information."""
    return {"content": text, "context": ""}


def credited(note_text: str, turns: list[tuple[str, str]]) -> frozenset[str]:
    """The turns a note is credited for: those whose content it still holds.

    Dedupe merges a repeated turn into an existing note and a refinement
    overwrites a note's text; crediting a note with every turn that ever
    touched it would count turns whose words it no longer has. A turn counts
    when each of its content words (:func:`mnemo.core.text.content_tokens`) is
    in the note's final text."""
    from mnemo.core import content_tokens

    held = content_tokens(note_text)
    return frozenset(dia for dia, text in turns if content_tokens(text) <= held)


@dataclass
class Written:
    """One conversation written through mnemo and through the memory-agent layout."""

    conv: Conversation
    user: Any  # mnemo.User
    texts: list[str]  # the turns' note texts
    contexts: list[str | None]  # each turn's context (turn_contexts)
    store: InMemoryStore
    covers: dict[str, frozenset[str]]  # mnemo note id -> dialog turns it holds
    statuses: Counter
    agent_store: InMemoryStore
    agent_ns: tuple[str, ...]
    dia_of_key: dict[str, str]  # memory-agent key -> dialog turn


def warm_cache(
    conv: Conversation,
    emb: CachingEmbeddings,
    texts: list[str],
    contexts: list[str | None],
    questions: list,
    agent_queries: list[str],
    timing: Timing,
) -> None:
    """Embed everything this conversation needs up front, in batches: the
    store then finds every vector in the cache (same vectors, less time)."""
    agent_docs = [get_text_at_path(memory_agent_value(t), "$")[0] for t in texts]
    start = time.perf_counter()
    # A note in context has two vectors: its text's (its dedupe lookup's too) and its text in context's.
    emb.warm("p", texts + indexed_texts(texts, contexts), desc=f"{conv.sample_id}: notes (passages)")
    emb.warm("p", agent_docs, desc=f"{conv.sample_id}: memory-agent values")
    emb.warm("q", [q.question for q in questions] + agent_queries, desc=f"{conv.sample_id}: questions")
    timing["embedding_s"] += time.perf_counter() - start


def indexed_texts(texts: list[str], contexts: list[str | None] | None) -> list[str]:
    """What the store embeds for each turn's note: its text beside its context."""
    from mnemo.notes import validate_context
    from mnemo.notes.model import indexed_text

    if contexts is None:
        return list(texts)
    return [indexed_text(t, validate_context(c)) if c else t for t, c in zip(texts, contexts, strict=True)]


def turn_contexts(conv: Conversation, texts: list[str]) -> list[str | None]:
    """Each turn's context: the turn before it in the same session (what it
    answered), ``None`` for a session's first turn."""
    return [
        texts[i - 1] if i > 0 and conv.turns[i - 1].session == turn.session else None
        for i, turn in enumerate(conv.turns)
    ]


async def write_mnemo(
    conv: Conversation,
    texts: list[str],
    contexts: list[str | None] | None,
    user: Any,
    emb: CachingEmbeddings,
    statuses: Counter,
    timing: Timing,
) -> tuple[InMemoryStore, dict[str, frozenset[str]]]:
    """mnemo: one aremember_many per turn, as write_memory does per turn
    (with the turn's context, or none); the store and the turns each note is
    credited for."""
    from mnemo import alist_notes, aremember_many
    from mnemo.stores import index_config

    start = time.perf_counter()
    store = InMemoryStore(index=index_config(emb))  # type: ignore[arg-type]  # IndexConfig is a TypedDict
    merged: dict[str, list[tuple[str, str]]] = defaultdict(list)  # note id -> (turn, its text)
    for i, (turn, text) in enumerate(
        zip(
            progress(conv.turns, desc=f"{conv.sample_id}: notes written", unit="turn", leave=False),
            texts,
            strict=False,
        )
    ):
        (result,) = await aremember_many(store, user, [text], contexts=[contexts[i]] if contexts else None)
        statuses[result["status"]] += 1
        merged[result["note"]["id"]].append((turn.dia_id, text))
    final = {n["id"]: n["text"] for n in await alist_notes(store, user)}
    timing["mnemo_write_s"] += time.perf_counter() - start
    return store, {nid: credited(final.get(nid, ""), turns) for nid, turns in merged.items()}


async def write_memory_agent(
    conv: Conversation,
    texts: list[str],
    emb: CachingEmbeddings,
    written: Written,
    timing: Timing,
    fields: tuple[str, ...] = ("$",),
) -> InMemoryStore:
    """memory-agent template layout: ("memories", user_id), uuid keys, whole
    value embedded (``fields``: what the index embeds; the template's is
    ``$``, the whole value); the store (``written.agent_store`` for ``$``)."""
    from mnemo.stores.embeddings import DIMS

    start = time.perf_counter()
    store = InMemoryStore(index={"embed": emb, "dims": DIMS, "fields": list(fields)})
    if fields == ("$",):
        written.agent_store = store
    # Batches in which no text repeats: InMemoryStore embeds each distinct
    # text of a batch once and then fails on the count ("Number of embeddings
    # (688) does not match number of indices (689)") when two puts share one.
    batches: list[list[PutOp]] = [[]]
    in_batch: set[str] = set()
    for turn, text in zip(conv.turns, texts, strict=True):
        key = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{conv.sample_id}/{turn.dia_id}/{len(written.dia_of_key)}"))
        written.dia_of_key[key] = turn.dia_id
        if text in in_batch:
            batches.append([])
            in_batch.clear()
        in_batch.add(text)
        batches[-1].append(PutOp(written.agent_ns, key, memory_agent_value(text)))
    for puts in batches:
        if puts:
            await store.abatch(puts)
    timing["memory_agent_write_s"] += time.perf_counter() - start
    return store
