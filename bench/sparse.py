"""The learned sparse ranking (SPLADE, :mod:`mnemo.stores.splade`): what it
does to the probe users' ranks and what it costs.

* ``probe``: every question of ``bench/data/recall_probe.json`` (English and
  Chinese notes and questions), the rank of the note it is about returned by
  the real :func:`mnemo.arecall` with the shipped ``SPARSE_WEIGHT`` and with
  0 (two rankings), with the default margin and with none; counted per
  question script -> note script.
* ``cost``: loading the model (seconds, resident memory added), CPU per text
  in the encoder's thread (LoCoMo turns in their context as the notes, the
  questions as the queries), and the size of a note's vector (non-zero
  terms, JSON bytes). Per-turn figures are in ``turn_cost``.

Its recall on LoCoMo is ``sparse_grid`` in ``tune.json``.
"""

from __future__ import annotations

import asyncio
import json
import math
import statistics
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import CachingEmbeddings, meta, write_json
from bench.stats import summary
from bench.thresholds_replay import PROBE

#: Texts encoded for the cost figures (LoCoMo's first conversation).
COST_TEXTS = 300


async def probe(emb: CachingEmbeddings, path: Path = PROBE) -> dict[str, Any]:
    from unittest import mock

    from langgraph.store.memory import InMemoryStore

    from mnemo import User, arecall, aremember_many
    from mnemo.core import script_of
    from mnemo.notes import RECALL_MARGIN
    from mnemo.notes.recall import SPARSE_WEIGHT
    from mnemo.stores import index_config

    users = json.loads(path.read_text("utf-8"))["users"]
    rows = []
    for name, u in users.items():
        store, user = InMemoryStore(index=index_config(emb)), User.of(f"probe-{name}")  # type: ignore[arg-type]
        await aremember_many(store, user, u["notes"], max_notes=None)
        for question, target in u["questions"]:
            row: dict[str, Any] = {"user": name, "question": question, "pair": _pair(script_of, question, target)}
            for label, margin in (("no_cut", None), ("margin", RECALL_MARGIN)):
                for weight in (0.0, SPARSE_WEIGHT):
                    with mock.patch("mnemo.notes.recall.SPARSE_WEIGHT", weight):
                        notes = await arecall(store, user, question, limit=len(u["notes"]), margin=margin)
                    texts = [n["text"] for n in notes]
                    rank = texts.index(target) + 1 if target in texts else None
                    row[f"{label}_{'on' if weight else 'off'}"] = rank
            rows.append(row)
    counts: dict[str, dict[str, Counter]] = {}
    for label in ("no_cut", "margin"):
        counts[label] = {}
        for row in rows:
            off = row[f"{label}_off"] or math.inf
            on = row[f"{label}_on"] or math.inf
            change = "same" if on == off else ("rose" if on < off else "fell")
            counts[label].setdefault(row["pair"], Counter())[change] += 1
    return {
        "sparse_weight": SPARSE_WEIGHT,
        "rule": "rank of the question's note, 1 = first; rose / fell = with the sparse ranking against without",
        "counts": {label: {pair: dict(c) for pair, c in by.items()} for label, by in counts.items()},
        "questions": rows,
    }


async def locomo_grid(
    data: Path, emb: CachingEmbeddings, *, smoke: bool = False, note_format: str = "said"
) -> dict[str, Any]:
    """``sparse_grid`` of ``tune.json`` on a replay of mnemo's write path that
    skips dedupe (a repeated text is one note crediting every turn that said
    it): each turn a note with the turn before it as context, put as mnemo
    puts it, recalled by the real :func:`mnemo.arecall` (``margin=None``, limit
    25) under each weight of :data:`bench.tune.SPARSE_GRID`. Cheaper than
    the full benchmark (no dedupe lookups to embed, no other methods)."""
    from bench.tune import sparse_table

    results = await locomo_results(data, emb, smoke=smoke, note_format=note_format)
    return {"note_format": note_format, **sparse_table(results, [5, 10, 25])}


async def locomo_results(
    data: Path,
    emb: CachingEmbeddings,
    *,
    smoke: bool = False,
    only: Sequence[str] = (),
    note_format: str = "said",
) -> list[Any]:
    """The questions of :func:`locomo_grid` with their ranking under each
    weight (``only``: these conversations, to split a run over processes;
    ``note_format`` as ``python -m bench locomo --note-format``)."""
    from bench.locomo import QuestionResult
    from bench.locomo_data import ALL_CATEGORIES, load_locomo, truncate

    conversations = [c for c in load_locomo(data, note_format=note_format) if not only or c.sample_id in only]
    if smoke:
        conversations = [truncate(conversations[0], sessions=2, questions=12)]
    results: list[QuestionResult] = []
    for conv in conversations:
        questions = [q for q in conv.questions if q.evidence and q.category in ALL_CATEGORIES]
        store, user, covers = await _replay_writes(conv, emb, [q.question for q in questions])
        for q in questions:
            r = QuestionResult(q.category, frozenset(q.evidence), frozenset(q.sessions), conversation=conv.sample_id)
            await _grid(store, user, q.question, covers, r)
            results.append(r)
        print(f"{conv.sample_id}: {len(questions)} questions", file=sys.stderr)
    return results


async def _replay_writes(conv: Any, emb: CachingEmbeddings, questions: list[str]) -> tuple[Any, Any, dict]:
    from langgraph.store.memory import InMemoryStore

    from bench.locomo import stored_text, turn_contexts
    from mnemo import User
    from mnemo.notes import astamp, validate_context
    from mnemo.notes.model import INDEXED_TEXT_FIELD, indexed_text, normalize_note, note_key
    from mnemo.stores import index_config

    user = User.of(f"locomo-{conv.sample_id}")
    texts = [stored_text(t.text) for t in conv.turns]
    contexts = [validate_context(c) for c in turn_contexts(conv, texts)]
    emb.warm("p", texts, desc=f"{conv.sample_id}: notes")
    emb.warm("p", [indexed_text(t, c) for t, c in zip(texts, contexts, strict=True) if c], desc="in context")
    emb.warm("q", questions, desc=f"{conv.sample_id}: questions")
    values: dict[str, dict[str, Any]] = {}
    covers: dict[str, set[str]] = {}
    for turn, text, context in zip(conv.turns, texts, contexts, strict=True):
        key = note_key(normalize_note(text))
        covers.setdefault(key, set()).add(turn.dia_id)
        if key not in values:
            value = {"id": key, "text": text, "norm": normalize_note(text), "source": "user_said"}
            value |= {"first_seen": "", "updated_at": ""}
            if context:
                value |= {"context": context, INDEXED_TEXT_FIELD: indexed_text(text, context)}
            values[key] = value
    await astamp(values.values())
    store = InMemoryStore(index=index_config(emb))  # type: ignore[arg-type]
    ns = user.namespace("notes")
    for key, value in values.items():  # one by one: InMemoryStore fails on a text repeated within a batch
        await store.aput(ns, key, value, index=["text", INDEXED_TEXT_FIELD] if INDEXED_TEXT_FIELD in value else None)
    return store, user, {k: frozenset(v) for k, v in covers.items()}


async def _grid(store: Any, user: Any, question: str, covers: dict, r: Any) -> None:
    from unittest import mock

    from bench.tune import SPARSE_GRID
    from mnemo import arecall

    for weight in SPARSE_GRID:
        with mock.patch("mnemo.notes.recall.SPARSE_WEIGHT", weight):
            notes = await arecall(store, user, question, limit=25, margin=None)
        r.grids["sparse"][weight] = [covers[n["id"]] for n in notes]


def _pair(script_of: Any, question: str, target: str) -> str:
    def lang(text: str) -> str:
        return "en" if script_of(text) == "LATIN" else "zh"

    return f"{lang(question)}->{lang(target)}"


def cost(data: Path | None, limit: int = COST_TEXTS) -> dict[str, Any]:
    from mnemo.notes.model import indexed_text
    from mnemo.stores.splade import SpladeEncoder, weights_dir

    folder = weights_dir()
    if folder is None:
        return {"weights_installed": False}
    notes, queries = _texts(data, limit)
    rss = _rss_mb()
    start = time.perf_counter()
    encoder = SpladeEncoder(folder)
    load_s = time.perf_counter() - start
    encoder.encode("warm up")
    added_mb = _rss_mb() - rss

    def timed(texts: list[str]) -> tuple[list[float], list[dict[str, float]]]:
        ms, vectors = [], []
        for text in texts:
            t0 = time.thread_time()
            vectors.append(encoder.encode(text))
            ms.append((time.thread_time() - t0) * 1000)
        return ms, vectors

    note_ms, vectors = timed([indexed_text(t, c) for t, c in notes])
    query_ms, _ = timed(queries)
    return {
        "weights_installed": True,
        "load_s": round(load_s, 2),
        "rss_added_mb": round(added_mb, 1),
        "note_cpu_ms": summary(note_ms),
        "query_cpu_ms": summary(query_ms),
        "note_nonzero_terms": statistics.median(len(v) for v in vectors) if vectors else None,
        "note_vector_json_bytes": statistics.median(len(json.dumps(v)) for v in vectors) if vectors else None,
        "texts": {"notes": len(notes), "queries": len(queries)},
    }


def _texts(data: Path | None, limit: int) -> tuple[list[tuple[str, str | None]], list[str]]:
    """Notes (text, context) and queries: LoCoMo's first conversation, or the probe users."""
    if data is not None and data.exists():
        from bench.locomo import stored_text, turn_contexts
        from bench.locomo_data import load_locomo

        conv = load_locomo(data)[0]
        texts = [stored_text(t.text) for t in conv.turns]
        contexts = turn_contexts(conv, texts)
        return list(zip(texts, contexts, strict=True))[:limit], [q.question for q in conv.questions][:limit]
    users = json.loads(PROBE.read_text("utf-8"))["users"].values()
    return [(n, None) for u in users for n in u["notes"]], [q for u in users for q, _ in u["questions"]]


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20


def run(out: Path, *, data: Path | None, emb: CachingEmbeddings, smoke: bool = False) -> dict[str, Any]:
    """Write ``out/sparse.json``; returns the result."""
    started = time.time()
    result = {"benchmark": "sparse", "probe": asyncio.run(probe(emb)), "cost": cost(data, 20 if smoke else COST_TEXTS)}
    if data is not None and data.exists():
        from mnemo.notes.sparse_vectors import memoized_query_vectors

        # A question's sparse vector is the same under every weight: computed once.
        with memoized_query_vectors():
            result["locomo_replay"] = asyncio.run(locomo_grid(data, emb, smoke=smoke))
    result["meta"] = meta("sparse", started)
    write_json(out / "sparse.json", result)
    print_summary(result)
    return result


def print_summary(result: dict[str, Any]) -> None:
    print(
        f"\nProbe users, rank of the question's note with / without SPLADE (weight {result['probe']['sparse_weight']}):"
    )
    for label, by in result["probe"]["counts"].items():
        print(f"  {label}: " + "; ".join(f"{pair} {dict(c)}" for pair, c in sorted(by.items())))
    if grid := result.get("locomo_replay"):
        for row in grid["rows"]:
            print(f"  weight {row['sparse_weight']}: " + ", ".join(f"{k} {v}" for k, v in row.items() if "@" in k))
        print(f"  chosen on tune: {grid['chosen_on_tune']}, vs off: {grid['chosen_vs_baseline']}")
    c = result["cost"]
    if c.get("weights_installed"):
        print(
            f"SPLADE: load {c['load_s']} s, +{c['rss_added_mb']} MB, note {c['note_cpu_ms']['p50']} ms p50, "
            f"query {c['query_cpu_ms']['p50']} ms p50, {c['note_nonzero_terms']} terms, "
            f"{c['note_vector_json_bytes']} JSON bytes per note\n"
        )
