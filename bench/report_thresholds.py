"""The tables of ``thresholds.json`` in ``python -m bench report``: dedupe on the
paraphrase pairs, the recall threshold on LoCoMo, the probe users."""

from __future__ import annotations

from typing import Any

from bench.tables import pct, table


def thresholds_tables(d: dict[str, Any]) -> str:
    dd = d["dedupe"]
    sizes = ", ".join(f"{s.replace('_', ' ')} {n['same']} + {n['different']}" for s, n in dd["pairs_per_split"].items())
    lines = [
        f"**Dedupe** on `{dd['file']}` ({dd['pairs']['same']} same-fact pairs, {dd['pairs']['different']} "
        f"different-fact pairs; {sizes}); similarity = {dd['lookup']}, as `aremember_many`'s lookup computes "
        "it; same deduped / different merged, with the lexical guard unless said\n",
        "| threshold | tune | held out | all pairs, similarity only | former lookup (query): tune | former: held out |",
        "|---|---|---|---|---|---|",
    ]
    for r in dd["sweep"]:
        mark = " (default)" if abs(r["threshold"] - dd["default_threshold"]) < 1e-9 else ""
        rates = [
            (r[f"{p}{s}_same_deduped"], r[f"{p}{s}_different_merged"])
            for p in ("", "former_")
            for s in ("tune", "held_out")
        ]
        rates.insert(2, (r["same_deduped_similarity_only"], r["different_merged_similarity_only"]))
        lines.append(f"| {r['threshold']:.2f}{mark} | " + " | ".join(f"{pct(a)} / {pct(b)} %" for a, b in rates) + " |")
    chosen, chk = dd["chosen_on_tune"], dd["real_path_check"]
    lines.append("")
    lines.append(
        f"Chosen on the tune pairs ({chosen['rule']}): {chosen['threshold']}; `DEDUPE_THRESHOLD` = "
        f"{dd['default_threshold']}. Real write path at {chk['threshold']}: {chk['pairs_agreeing_with_formula']}/"
        f"{chk['pairs']} pairs agree with the formula; outcomes {chk['statuses']}."
    )
    turns = dd.get("locomo_turns")
    if turns:
        at = {way: {r["threshold"]: r for r in rows} for way, rows in turns["merged"].items()}
        new, old = at["passage"].get(dd["default_threshold"]), at["query"].get(dd["former"]["threshold"])
        near = turns["nearest_earlier_turn"]
        lines.append("")
        lines.append(
            f"LoCoMo turns as notes (tune {turns['turns']['tune']:,} / held out {turns['turns']['held_out']:,} "
            f"turns), each against its nearest earlier turn: p50 {near['passage']['p50']}, p95 "
            f"{near['passage']['p95']} passage to passage (as a query: p50 {near['query']['p50']}, p95 "
            f"{near['query']['p95']}); merged by the threshold and the guard at {dd['default_threshold']}: "
            f"{new and new['tune']} / {new and new['held_out']} (the former lookup at "
            f"{dd['former']['threshold']}: {old and old['tune']} / {old and old['held_out']})."
        )
    r = d.get("recall")
    if r:
        lines.append("")
        lines.append(
            f"**Recall threshold** on LoCoMo ({r['questions']} questions of categories 1-4, "
            f"{r['evidence_pairs']} question-evidence pairs)\n"
        )
        quantiles = ("p5", "p25", "p50", "p75", "p95")
        lines += table(
            ["similarity", *quantiles],
            [
                [label, *(f"{r[key][q]:.3f}" for q in quantiles)]
                for label, key in (
                    ("question -> evidence turn", "question_to_evidence"),
                    ("question -> other turns", "question_to_other_turns"),
                    ("question -> best other turn", "question_to_best_other_turn"),
                )
            ],
        )
        lines.append("")
        lines += table(
            [
                "fixed cut (former rule)",
                "evidence above",
                "questions with some evidence above",
                "other turns above per question",
            ],
            [
                [
                    f"{row['min_score']:.2f}",
                    f"{pct(row['evidence_kept'])} %",
                    f"{pct(row['questions_with_some_evidence_kept'])} %",
                    str(row["other_turns_passing_per_question"]),
                ]
                for row in r["sweep"]
            ],
        )
        rel = r.get("relevance")
        if rel:
            lines.append("")
            lines.append(
                f"**Relevance rule**, recall replayed (limit {rel['limit']}); tune "
                f"{', '.join(rel['tune_conversations'])} / held out; dense kept = evidence the dense half "
                "lets through, other = other turns it lets through per question, R@k = turn recall of what "
                "recall returns\n"
            )
            lines.append(
                "| rule | tune: dense kept | other | R@5 | R@10 | R@25 "
                "| held out: dense kept | other | R@5 | R@10 | R@25 |"
            )
            lines.append("|---|---|---|---|---|---|---|---|---|---|---|")
            for row in rel["rows"]:
                mark = " (default)" if row["rule"] == f"margin {rel['default_margin']}" else ""
                cells = []
                for split in ("tune", "held_out"):
                    part = row[split]
                    if part is None:
                        cells += ["-"] * 5
                        continue
                    cells += [
                        f"{pct(part['evidence_kept_by_dense'])} %",
                        f"{part['other_turns_passing_per_question']}",
                        *(f"{pct(part[f'recall@{k}'])}" for k in (5, 10, 25)),
                    ]
                lines.append(f"| {row['rule']}{mark} | " + " | ".join(cells) + " |")
            lines.append("")
            chosen = rel["chosen_on_tune"] or {}
            lines.append(
                f"Chosen on the tune conversations ({chosen.get('rule')}): margin {chosen.get('margin')}; "
                f"`RECALL_MARGIN` = {rel['default_margin']}."
            )
    probe = d.get("probe")
    if probe:
        lines.append("")
        lines.append(
            f"**Probe users** (`{probe['file']}`, limit {probe['limit']}): the note a question is about "
            "recalled / first; notes an unrelated message (greeting, thanks) lets through the dense half, "
            "mean (max)\n"
        )
        names = list(probe["users"])
        lines.append(
            "| rule | "
            + " | ".join(f"{n} ({probe['users'][n]['notes']} notes): recalled / first | {n}: unrelated" for n in names)
            + " |"
        )
        lines.append("|---|" + "---|---|" * len(names))
        for rule in probe["users"][names[0]]["rules"]:
            cells = []
            for n in names:
                v = probe["users"][n]["rules"][rule]
                cells.append(f"{v['note_recalled']}/{v['questions']} / {v['note_first']}")
                cells.append(f"{v['unrelated_dense_passing_mean']} ({v['unrelated_dense_passing_max']})")
            lines.append(f"| {rule} | " + " | ".join(cells) + " |")
        chk = probe["real_path_check"]
        lines.append("")
        lines.append(
            f"`mnemo.arecall` (margin {chk['margin']}) returns what the replay computed for "
            f"{chk['queries_agreeing_with_replay']}/{chk['queries']} queries."
        )
    return "\n".join(lines)
