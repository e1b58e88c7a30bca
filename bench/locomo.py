"""LoCoMo retrieval: does the right memory reach the model, and at what token cost?

For every conversation, every dialog turn becomes a note of one user, written
through mnemo's own write path (:func:`mnemo.aremember_many`, one call per
turn, as the agent's ``write_memory`` does once per turn), so mnemo's dedupe,
fields and namespace rules apply; each question is then answered with mnemo's
own recall path. Methods compared in the same run, with the same embedding
model and the same note texts:

``mnemo``
    :func:`mnemo.arecall` with ``limit=max(k)`` and ``margin=None`` (no
    relevance cut): the ranking mnemo's recall produces (dense hits fused
    with BM25 over the user's notes, as the agent's ``recall_notes`` and
    ``load_memory`` do). Each turn's note carries its context: the turn
    before it in the same session (``contexts=`` of
    :func:`mnemo.aremember_many`), embedded beside the note's own text
    (:func:`mnemo.notes.model.indexed_text`).
``mnemo_no_context``
    the same, with the notes written without a context (text alone).
``mnemo_thresholded``
    the same call with mnemo's default relevance rule (dense hits at least
    ``RECALL_MARGIN`` above the median of the user's candidates in their
    script, :func:`mnemo.notes.recall.relevant_hits`; what ``recall_notes`` and
    ``load_memory`` keep): fewer notes, fewer tokens.
``memory_agent``
    LangChain's ``memory-agent`` template: the whole value
    ``{"content", "context"}`` embedded (index ``fields`` left at ``["$"]``),
    ``store.asearch(("memories", user), query=str([last messages]), limit=10)``,
    no threshold. Its recall@25 is capped by that ``limit=10``.
``bm25``
    ``bm25s`` over the same texts (English stopwords, no stemming; Chinese is
    segmented with ``jieba``), only documents sharing a term are returned.
``full_context``
    every turn in the prompt: recall 1 by definition; the token-cost reference.

``mnemo_snapshot`` (under ``token_cost``) is what ``load_memory`` would
really inject for the question with the agent's defaults
(:class:`nodes.context.Context`): the relevant notes plus
the most recent ones, rendered under the character budget; its recall is
reported once (it does not depend on k).

Recall of a question = fraction of its evidence turns (turn level) or
evidence sessions (session level: the sessions of the top-k retrieved turns)
found in the top k; averaged over the questions of a category; ``overall``
averages categories 1-4 question-weighted, category 5 (adversarial) is
reported apart. A note that dedupe merged several turns into counts for all
of them.
"""

from __future__ import annotations

import asyncio
import re
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langgraph.store.base import PutOp
from langgraph.store.base.embed import get_text_at_path
from langgraph.store.memory import InMemoryStore

from bench.common import CachingEmbeddings, TokenCounter, display_path, meta, progress, write_json
from bench.locomo_data import ALL_CATEGORIES, CATEGORY_NAMES, MAIN_CATEGORIES, Conversation, load_locomo, truncate

#: LoCoMo paper (Maharana et al., 2024), Table 3: DRAGON retriever, dialog
#: turns as the retrieval unit, all 10 conversations, all categories.
DRAGON_REFERENCE = {"recall@5": 0.567, "recall@10": 0.662, "recall@25": 0.767, "recall@50": 0.827}
#: The memory-agent template's search limit.
MEMORY_AGENT_LIMIT = 10

#: The headline table's methods (``python -m bench locomo``); ``python -m bench
#: tune`` adds mnemo's ablations (:data:`bench.tune.ABLATIONS`).
METHODS = ("mnemo", "memory_agent", "bm25", "full_context")
#: Settings may be chosen looking at these conversations of the public split
#: (the first two); every other conversation is reported as held out
#: (``split`` in the JSON): a reader sees what is fit and what generalises.
TUNE_CONVERSATIONS = ("conv-26", "conv-30")

_DESCRIPTIONS = {
    "mnemo": (
        "mnemo.arecall(limit=max k, margin=None) over notes written with mnemo.aremember_many, one call per turn"
    ),
    "memory_agent": (
        "LangChain memory-agent template: value {content, context} embedded whole (fields ['$']), "
        "asearch(query=str([question]), limit=10), no threshold; recall@k>10 is capped by the limit"
    ),
    "bm25": "bm25s, English stopwords, no stemming, jieba for Chinese; documents with no shared term are not returned",
    "full_context": "all turns in the prompt: recall 1 by definition; token-cost reference",
}


# --------------------------------------------------------------------------
# BM25


_WORD = re.compile(r"(?u)\b\w\w+\b")
_CJK_RUN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")


def bm25_tokens(text: str) -> list[str]:
    """Lower-cased words minus English stopwords; runs of Chinese characters
    are segmented with jieba (BM25 on unsegmented Chinese sees one "word"
    per sentence and matches nothing)."""
    from bm25s.stopwords import STOPWORDS_EN

    folded = text.casefold()
    tokens: list[str] = []
    runs = _CJK_RUN.findall(folded)
    if runs:
        import logging

        import jieba

        jieba.setLogLevel(logging.WARNING)
        for run in runs:
            tokens.extend(w for w in jieba.lcut(run) if w.strip())
        folded = _CJK_RUN.sub(" ", folded)
    stop = set(STOPWORDS_EN)
    tokens.extend(w for w in _WORD.findall(folded) if w not in stop)
    return tokens


class Bm25Index:
    """``bm25s`` over a list of texts; :meth:`search` returns indices, best first."""

    def __init__(self, texts: list[str]) -> None:
        import bm25s

        self.size = len(texts)
        self.retriever = bm25s.BM25()
        if texts:  # bm25s cannot index an empty corpus (a conversation without turns)
            self.retriever.index([bm25_tokens(t) for t in texts], show_progress=False)

    def search(self, query: str | list[str], k: int) -> list[int]:
        """The best ``k`` texts for ``query`` (a text, or its tokens already)."""
        tokens = bm25_tokens(query) if isinstance(query, str) else query
        if not tokens or not self.size:
            return []
        docs, scores = self.retriever.retrieve([tokens], k=min(k, self.size), show_progress=False)
        return [int(d) for d, s in zip(docs[0], scores[0], strict=True) if s > 0]


# --------------------------------------------------------------------------
# one conversation


#: Seconds spent per step, summed over conversations.
Timing = defaultdict[str, float]


@dataclass
class QuestionResult:
    category: str
    evidence: frozenset[str]
    sessions: frozenset[int]
    conversation: str = ""
    #: method -> ranked list of retrieved items, each the set of turns it covers
    ranked: dict[str, list[frozenset[str]]] = field(default_factory=dict)
    #: method -> k -> tokens of the top-k items as they would be injected
    tokens: dict[str, dict[int, int]] = field(default_factory=dict)
    #: mnemo's ranking as note ids and texts (what a second round starts from)
    mnemo_notes: list[tuple[str, str]] = field(default_factory=list)
    #: grid name -> setting -> mnemo's ranking with that setting (``python -m bench tune``)
    grids: dict[str, dict[Any, list[frozenset[str]]]] = field(default_factory=lambda: defaultdict(dict))
    #: mnemo_snapshot: turns covered by what load_memory would inject, and its tokens
    snapshot_covers: frozenset[str] = frozenset()
    snapshot_tokens: int = 0
    snapshot_notes: int = 0
    full_context_tokens: int = 0


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


def render_notes(notes: list[tuple[str, str]]) -> str:
    """Note lines as mnemo's prompt shows them (``render_snapshot``)."""
    return "\n".join(f"- {text}  (note {nid[:8]})" for nid, text in notes)


def render_memory_agent(items: list) -> str:
    """The memory block of the memory-agent template's system prompt."""
    if not items:
        return ""
    lines = "\n".join(f"[{it.key}]: {it.value} (similarity: {it.score})" for it in items)
    return f"\n<memories>\n{lines}\n</memories>"


def render_full_context(conv: Conversation) -> str:
    by_session: dict[int, list[str]] = defaultdict(list)
    for t in conv.turns:
        by_session[t.session].append(t.text)
    return "\n".join(
        f"Session {s} ({conv.session_dates.get(s, '')}):\n" + "\n".join(lines)
        for s, lines in sorted(by_session.items())
    )


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


#: What ``python -m bench tune`` runs for one question, beside the headline methods.
QuestionHook = Callable[[Any, QuestionResult], Awaitable[None]]


@dataclass(frozen=True)
class Tuning:
    """What ``python -m bench tune`` adds to the headline run (:mod:`bench.tune`)."""

    name: str  # the result file's stem
    methods: tuple[str, ...]  # beside METHODS
    descriptions: dict[str, str]
    #: once per conversation, after the headline writes: returns the per-question hook
    prepare: Callable[[Written, CachingEmbeddings, Timing, TokenCounter, list[int]], Awaitable[QuestionHook]]
    #: the grids' tables, from every question's result
    tables: Callable[[list[QuestionResult], list[int]], dict[str, Any]]


async def evaluate_conversation(
    conv: Conversation,
    emb: CachingEmbeddings,
    ks: list[int],
    counter: TokenCounter,
    timing: Timing,
    tuning: Tuning | None = None,
) -> tuple[list[QuestionResult], Counter]:
    """Write the conversation through mnemo and through the memory-agent
    layout, then retrieve for every question with every method (and what
    ``tuning`` adds)."""
    from mnemo import User

    user = User.of(f"locomo-{conv.sample_id}")
    texts = [stored_text(t.text) for t in conv.turns]
    contexts = turn_contexts(conv, texts)
    questions = [q for q in conv.questions if q.evidence and q.category in ALL_CATEGORIES]
    agent_queries = [str([q.question]) for q in questions]
    _warm_cache(conv, emb, texts, contexts, questions, agent_queries, timing)
    statuses: Counter = Counter()
    store, covers = await write_mnemo(conv, texts, contexts, user, emb, statuses, timing)
    written = Written(
        conv=conv,
        user=user,
        texts=texts,
        contexts=contexts,
        store=store,
        covers=covers,
        statuses=statuses,
        agent_store=InMemoryStore(),
        agent_ns=("memories", user.label),
        dia_of_key={},
    )
    await _write_memory_agent(conv, texts, emb, written, timing)
    start = time.perf_counter()
    bm25 = Bm25Index(texts)
    timing["bm25_index_s"] += time.perf_counter() - start
    hook = await tuning.prepare(written, emb, timing, counter, ks) if tuning else None

    full_tokens = counter.count(render_full_context(conv))
    results: list[QuestionResult] = []
    for q, agent_query in zip(
        progress(questions, desc=f"{conv.sample_id}: questions asked", unit="q", leave=False),
        agent_queries,
        strict=False,
    ):
        r = QuestionResult(
            q.category,
            frozenset(q.evidence),
            frozenset(q.sessions),
            conversation=conv.sample_id,
            full_context_tokens=full_tokens,
        )
        await _retrieve(q, agent_query, written, bm25, r, ks, counter, timing)
        await _snapshot(q, user, written, r, counter)
        if hook is not None:
            await hook(q, r)
        results.append(r)
    return results, written.statuses


def _warm_cache(
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
    from mnemo.notes import indexed_text, validate_context

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


async def _write_memory_agent(
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
    from mnemo.stores import DIMS

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


async def _retrieve(
    q: Any,
    agent_query: str,
    written: Written,
    bm25: Bm25Index,
    r: QuestionResult,
    ks: list[int],
    counter: TokenCounter,
    timing: Timing,
) -> None:
    """Rank the turns for ``q`` with every headline method; record the ranks and tokens in ``r``."""
    from mnemo import arecall

    max_k = max(ks)
    t0 = time.perf_counter()
    notes = await arecall(written.store, written.user, q.question, limit=max_k, margin=None)
    t1 = time.perf_counter()
    timing["mnemo_recall_s"] += t1 - t0
    items = await written.agent_store.asearch(written.agent_ns, query=agent_query, limit=MEMORY_AGENT_LIMIT)
    t2 = time.perf_counter()
    timing["memory_agent_search_s"] += t2 - t1
    lexical = bm25.search(q.question, max_k)
    timing["bm25_search_s"] += time.perf_counter() - t2

    r.mnemo_notes = [(n["id"], n["text"]) for n in notes]
    record_notes(r, "mnemo", r.mnemo_notes, written.covers, ks, counter)
    record_agent(r, "memory_agent", items, written, ks, counter)
    r.ranked["bm25"] = [frozenset({written.conv.turns[i].dia_id}) for i in lexical]
    r.tokens["bm25"] = {k: counter.count("\n".join(f"- {written.texts[i]}" for i in lexical[:k])) for k in ks}
    r.tokens["full_context"] = {k: r.full_context_tokens for k in ks}


def record_notes(
    r: QuestionResult,
    method: str,
    notes: list[tuple[str, str]],
    covers: dict[str, frozenset[str]],
    ks: list[int],
    counter: TokenCounter,
) -> None:
    """A mnemo method's ranking (note ids and texts, best first) and its tokens at every k, into ``r``."""
    r.ranked[method] = [covers[nid] for nid, _ in notes]
    r.tokens[method] = {k: counter.count(render_notes(notes[:k])) for k in ks}


def record_agent(
    r: QuestionResult, method: str, items: list, written: Written, ks: list[int], counter: TokenCounter
) -> None:
    """A memory-agent layout's search results and their tokens at every k, into ``r``."""
    r.ranked[method] = [frozenset({written.dia_of_key[it.key]}) for it in items]
    r.tokens[method] = {k: counter.count(render_memory_agent(items[:k])) for k in ks}


async def _snapshot(q: Any, user: Any, written: Written, r: QuestionResult, counter: TokenCounter) -> None:
    """What load_memory would inject for ``q``, with the agent's defaults."""
    from mnemo.turn import aload_snapshot, fit_snapshot, render_snapshot
    from nodes.context import Context

    ctx = Context(user_id=user.id)
    snapshot = await aload_snapshot(
        written.store,
        user,
        q.question,
        recall_limit=ctx.recall_limit,
        recent_limit=ctx.recent_limit,
        recall_margin=ctx.recall_margin,
    )
    rendered = render_snapshot(snapshot, char_budget=ctx.memory_char_budget)
    fitted = fit_snapshot(snapshot, char_budget=ctx.memory_char_budget)  # the notes in `rendered`
    shown = fitted["relevant"] + fitted["recent"]
    r.snapshot_covers = frozenset().union(*(written.covers[n["id"]] for n in shown)) if shown else frozenset()
    r.snapshot_tokens = counter.count(rendered)
    r.snapshot_notes = len(shown)


# --------------------------------------------------------------------------
# aggregation


def _recall(evidence: frozenset, covered: set) -> float:
    return len(evidence & covered) / len(evidence)


def recall_table(
    results: list[QuestionResult], method: str, level: str, ks: list[int]
) -> dict[str, dict[str, float | None]]:
    """``{"recall@k": {"overall": x, "1": x, ..., "5": x}}`` for one method and level."""
    out: dict[str, dict[str, float | None]] = {}
    for k in ks:
        per_cat: dict[str, list[float]] = defaultdict(list)
        for r in results:
            if method == "full_context":
                value = 1.0  # every turn is in the prompt
            else:
                turns: set[str] = set().union(*r.ranked[method][:k])
                if level == "turn":
                    value = _recall(r.evidence, turns)
                else:
                    value = _recall(r.sessions, {int(d[1:].split(":")[0]) for d in turns})
            per_cat[r.category].append(value)
        row = {"overall": _mean([v for c in MAIN_CATEGORIES for v in per_cat[c]])}
        row.update({c: _mean(per_cat[c]) for c in ALL_CATEGORIES})
        out[f"recall@{k}"] = row
    return out


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def _mean_main(results: list[QuestionResult], value) -> float | None:
    vals = [value(r) for r in results if r.category in MAIN_CATEGORIES]
    return round(sum(vals) / len(vals), 1) if vals else None


def snapshot_recall(results: list[QuestionResult], level: str) -> dict[str, float | None]:
    per_cat: dict[str, list[float]] = defaultdict(list)
    for r in results:
        if level == "turn":
            per_cat[r.category].append(_recall(r.evidence, set(r.snapshot_covers)))
        else:
            per_cat[r.category].append(_recall(r.sessions, {int(d[1:].split(":")[0]) for d in r.snapshot_covers}))
    row = {"overall": _mean([v for c in MAIN_CATEGORIES for v in per_cat[c]])}
    row.update({c: _mean(per_cat[c]) for c in ALL_CATEGORIES})
    return row


# --------------------------------------------------------------------------
# entry point


def run(
    data: Path,
    out: Path,
    *,
    ks: list[int],
    smoke: bool = False,
    note_format: str = "said",
    emb: CachingEmbeddings | None = None,
    counter: TokenCounter | None = None,
    tuning: Tuning | None = None,
) -> dict[str, Any]:
    """Run the LoCoMo benchmark and write ``out/locomo.json`` (with
    ``tuning``: its methods and grids too, into ``out/<tuning.name>.json``);
    returns the result."""
    started = time.time()
    ks = sorted(set(ks))
    conversations = load_locomo(data, note_format=note_format)
    if smoke:
        conversations = [truncate(conversations[0], sessions=2, questions=12)]
    if emb is None:
        from mnemo.stores import default_embeddings

        emb = CachingEmbeddings(default_embeddings)
    counter = counter or TokenCounter()

    timing: Timing = defaultdict(float)
    results, statuses, per_conversation = _evaluate_all(conversations, emb, ks, counter, timing, tuning)
    questions_total = Counter(q.category for c in conversations for q in c.questions)
    evaluated = Counter(r.category for r in results)
    names = METHODS + (tuning.methods if tuning else ())
    methods = _method_tables(results, ks, names, {**_DESCRIPTIONS, **(tuning.descriptions if tuning else {})})

    from mnemo.notes import DEDUPE_THRESHOLD, RECALL_MARGIN
    from nodes.context import Context

    ctx = Context(user_id="x")
    result = {
        "benchmark": tuning.name if tuning else "locomo",
        "data": {
            "path": display_path(data),
            "conversations": len(conversations),
            "turns": sum(len(c.turns) for c in conversations),
            "smoke": smoke,
            "note_format": note_format,
        },
        "k": ks,
        "questions": {c: evaluated.get(c, 0) for c in ALL_CATEGORIES},
        "questions_total": {c: questions_total.get(c, 0) for c in ALL_CATEGORIES},
        "questions_without_evidence": {c: questions_total.get(c, 0) - evaluated.get(c, 0) for c in ALL_CATEGORIES},
        "categories": CATEGORY_NAMES,
        "evidence": _evidence_summary(conversations),
        "methods": methods,
        "reference": {
            "name": "LoCoMo paper (Maharana et al., ACL 2024), Table 3, DRAGON, dialog turns, "
            "all 10 conversations, all categories",
            "turn": DRAGON_REFERENCE,
        },
        "mnemo_write": {
            "turns": sum(statuses.values()),
            "notes": statuses["stored"],
            "statuses": dict(statuses),
            "merged_turns": statuses["duplicate"] + statuses["refined"],
            "dedupe_threshold": DEDUPE_THRESHOLD,
            "recall_margin": RECALL_MARGIN,
        },
        "token_cost": {
            "tokenizer": counter.name,
            "unit": "mean tokens per question, categories 1-4",
            "full_context": _mean_main(results, lambda r: r.full_context_tokens),
            "mnemo_snapshot": {
                "description": (
                    f"what load_memory injects with the agent's defaults: up to {ctx.recall_limit} notes "
                    f"at least {ctx.recall_margin} above the median of the user's notes in their script "
                    f"plus {ctx.recent_limit} most recent notes, "
                    f"{ctx.memory_char_budget}-character budget (the profile is empty here)"
                ),
                "tokens": _mean_main(results, lambda r: r.snapshot_tokens),
                "notes_shown": _mean_main(results, lambda r: r.snapshot_notes),
                "turn": snapshot_recall(results, "turn"),
                "session": snapshot_recall(results, "session"),
            },
            **{f"{m}@{k}": methods[m]["tokens"][f"recall@{k}"] for m in names if m != "full_context" for k in ks},
        },
        "split": split_tables(results, ks, names),
        **(tuning.tables(results, ks) if tuning else {}),
        "per_conversation": per_conversation,
        "embedding_cache": emb.stats(),
        "timing_s": {k: round(v, 1) for k, v in sorted(timing.items())},
    }
    name = tuning.name if tuning else "locomo"
    result["meta"] = meta(name, started, tokenizer=counter.name)
    write_json(out / f"{name}.json", result)
    print_table(result)
    return result


def _evaluate_all(
    conversations: list[Conversation],
    emb: CachingEmbeddings,
    ks: list[int],
    counter: TokenCounter,
    timing: Timing,
    tuning: Tuning | None,
) -> tuple[list[QuestionResult], Counter, dict[str, Any]]:
    """Every conversation evaluated: the per-question results, the write
    statuses, and a summary per conversation."""
    statuses: Counter = Counter()
    results: list[QuestionResult] = []
    per_conversation = {}
    for conv in progress(conversations, desc="LoCoMo conversations", unit="conv"):
        conv_results, conv_statuses = asyncio.run(evaluate_conversation(conv, emb, ks, counter, timing, tuning))
        results.extend(conv_results)
        statuses.update(conv_statuses)
        per_conversation[conv.sample_id] = {
            "turns": len(conv.turns),
            "sessions": len({t.session for t in conv.turns}),
            "notes": conv_statuses["stored"],
            "questions_evaluated": len(conv_results),
            f"mnemo_turn_recall@{ks[-1]}": recall_table(conv_results, "mnemo", "turn", [ks[-1]])[f"recall@{ks[-1]}"][
                "overall"
            ],
        }
    return results, statuses, per_conversation


def _method_tables(
    results: list[QuestionResult], ks: list[int], names: tuple[str, ...], descriptions: dict[str, str]
) -> dict[str, Any]:
    """Recall at every k, turn and session level, and tokens, per method."""
    methods: dict[str, Any] = {}
    for m in names:
        methods[m] = {
            "turn": recall_table(results, m, "turn", ks),
            "session": recall_table(results, m, "session", ks),
            "tokens": {f"recall@{k}": _mean_main(results, lambda r, m=m, k=k: r.tokens[m][k]) for k in ks},
            "description": descriptions[m],
        }
        if m != "full_context":
            methods[m]["items_returned"] = {
                f"recall@{k}": _mean_main(results, lambda r, m=m, k=k: len(r.ranked[m][:k])) for k in ks
            }
    methods["memory_agent"]["limit"] = MEMORY_AGENT_LIMIT
    return methods


def split_tables(results: list[QuestionResult], ks: list[int], names: tuple[str, ...] = METHODS) -> dict[str, Any]:
    """Turn-level recall of every method on the conversations settings may be
    chosen on (:data:`TUNE_CONVERSATIONS`) and on the others, held out."""
    parts = {
        "tune": [r for r in results if r.conversation in TUNE_CONVERSATIONS],
        "report": [r for r in results if r.conversation not in TUNE_CONVERSATIONS],
    }
    out: dict[str, Any] = {
        "rule": "settings are chosen on the tune conversations only; report is held out",
        "tune_conversations": sorted({r.conversation for r in parts["tune"]}),
        "report_conversations": sorted({r.conversation for r in parts["report"]}),
    }
    for name, part in parts.items():
        out[name] = {
            "questions": sum(1 for r in part if r.category in MAIN_CATEGORIES),
            "turn": {m: recall_table(part, m, "turn", ks) for m in names},
            "snapshot_turn": snapshot_recall(part, "turn"),
        }
    return out


def _evidence_summary(conversations: list[Conversation]) -> dict[str, Any]:
    """How many evidence ids the questions cite, and how many matched a turn."""
    unmatched = [u for c in conversations for q in c.questions for u in q.unmatched]
    return {
        "ids": sum(len(q.evidence) + len(q.unmatched) for c in conversations for q in c.questions),
        "matched": sum(len(q.evidence) for c in conversations for q in c.questions),
        "unmatched": len(unmatched),
        "unmatched_ids": unmatched[:50],
    }


def _pct(x: float | None) -> str:
    return "   -" if x is None else f"{100 * x:5.1f}"


def print_table(result: dict[str, Any]) -> None:
    """Recall@k overall (categories 1-4), ours beside the published reference."""
    ks = result["k"]
    questions = sum(result["questions"][c] for c in MAIN_CATEGORIES)
    print(f"\nLoCoMo turn-level recall@k, categories 1-4 ({questions} questions)")
    print(f"{'method':<22}" + "".join(f"{'R@' + str(k):>8}" for k in ks) + f"{'tokens@' + str(ks[-1]):>12}")
    for m, row in result["methods"].items():
        print(
            f"{m:<22}"
            + "".join(f"{_pct(row['turn'][f'recall@{k}']['overall']):>8}" for k in ks)
            + f"{row['tokens'][f'recall@{ks[-1]}'] or 0:>12.0f}"
        )
    ref = result["reference"]["turn"]
    for name, grid in result.items():
        if isinstance(grid, dict) and "chosen_on_tune" in grid:
            print(f"{name}: chosen on the tune conversations {grid['chosen_on_tune']}, shipped {grid['shipped']}")
    print(f"{'DRAGON (paper, all cat.)':<22}" + "".join(f"{_pct(ref.get(f'recall@{k}')):>8}" for k in ks))
    snap = result["token_cost"]["mnemo_snapshot"]
    print(
        f"mnemo snapshot as injected: turn recall {_pct(snap['turn']['overall'])}, {snap['tokens']} tokens "
        f"vs full context {result['token_cost']['full_context']} ({result['token_cost']['tokenizer'].split(';')[0]})\n"
    )
