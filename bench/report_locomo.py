"""The LoCoMo tables of ``python -m bench report``: ``locomo.json`` and ``tune.json``
(recall per method and category, tune beside held out, the settings' grids)."""

from __future__ import annotations

from typing import Any

from bench.locomo_data import CATEGORY_NAMES
from bench.tables import num, pct, table


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
            *(pct(row["turn"][f"recall@{k}"]["overall"]) for k in ks),
            *(pct(row["session"][f"recall@{k}"]["overall"]) for k in (ks[0], ks[-1])),
            *(num(row["tokens"][f"recall@{k}"]) for k in (ks[0], ks[-1])),
        ]

    ref = d["reference"]["turn"]
    lines += table(
        ["method", *(f"R@{k}" for k in ks), f"session R@{ks[0]}", f"session R@{ks[-1]}", f"tokens@{ks[0]}"]
        + [f"tokens@{ks[-1]}"],
        _recall_rows(d, headline, list(methods))
        + [
            ["*DRAGON, LoCoMo paper (all 10 conv., all categories)*", *(pct(ref.get(f"recall@{k}")) for k in ks)]
            + [""] * 4
        ],  # no session or token figures
    )
    snap = d["token_cost"]["mnemo_snapshot"]
    lines.append("")
    lines.append(
        f"What `load_memory` really injects (agent defaults, `mnemo_snapshot`): turn recall "
        f"{pct(snap['turn']['overall'])} %, session recall {pct(snap['session']['overall'])} %, "
        f"{num(snap['notes_shown'], 1)} notes, {num(snap['tokens'])} tokens per question, against "
        f"{num(d['token_cost']['full_context'])} tokens for the full conversation.\n"
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
        *table(
            ["method", *(f"{c} {CATEGORY_NAMES[c]} (n={d['questions'][c]})" for c in cats)],
            _recall_rows(d, lambda m: [pct(d["methods"][m]["turn"][f"recall@{k}"][c]) for c in cats], methods),
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
        *table(
            ["method", *(f"tune R@{k}" for k in ks), *(f"held out R@{k}" for k in ks)],
            _recall_rows(
                d,
                lambda m: [pct(split[p]["turn"][m][f"recall@{k}"]["overall"]) for p in ("tune", "report") for k in ks],
                methods,
            ),
        ),
    ]


def _grid_rows(grid: dict[str, Any], keys: list[str], at: tuple[int, ...]) -> list[list[str]]:
    """A grid's rows: its setting's columns, then tune and held-out recall at ``at``."""
    return [
        [*(str(row[key]) for key in keys), *(pct(row.get(f"{p}_recall@{k}")) for p in ("tune", "report") for k in at)]
        for row in grid["rows"]
    ]


def _gain(grid: dict[str, Any], against: str) -> str:
    gain = grid.get("chosen_vs_baseline", grid.get("chosen_vs_off")) or {}
    interval = gain.get("bootstrap_95")
    return (
        f"Held-out R@10 gain of the chosen setting over {against}: {pct(gain.get('report_recall@10_gain'))} points"
        + (f", paired bootstrap 95 % [{pct(interval[0])}, {pct(interval[1])}]" if interval else "")
        + "."
    )


def tune_tables(d: dict[str, Any]) -> str:
    """``tune.json``: every method on the tune and held-out conversations, and the grids."""
    at = (5, 10, 25)
    recall_cols = [f"{part} R@{k}" for part in ("tune", "held out") for k in at]
    lines = [*split_tables(d), "", *_category_table(d)]
    grid = d.get("fusion_grid")
    if grid:
        lines += _fusion_table(grid, at, recall_cols)
    sparse = d.get("sparse_grid")
    if sparse:
        lines += _sparse_table(sparse, at, recall_cols)
    return "\n".join(lines)


def _fusion_table(grid: dict[str, Any], at: tuple[int, ...], recall_cols: list[str]) -> list[str]:
    return [
        "",
        f"**Fusion settings** (reciprocal rank fusion constant k, BM25 weight; dense weighs 1). "
        f"Chosen on the tune conversations: {grid['chosen_on_tune']}; shipped "
        f"(`mnemo.notes.recall.FUSION_K`, `LEXICAL_WEIGHT`): {grid['shipped']}. The held-out columns are "
        "reported, never used to choose.\n",
        *table(["k", "BM25 weight", *recall_cols], _grid_rows(grid, ["fusion_k", "lexical_weight"], at)),
    ]


def _sparse_table(sparse: dict[str, Any], at: tuple[int, ...], recall_cols: list[str]) -> list[str]:
    return [
        "",
        f"**Learned sparse ranking** (SPLADE weight in the fusion; 0 = two rankings; weights installed: "
        f"{sparse['weights_installed']}). Chosen on the tune conversations: {sparse['chosen_on_tune']}; "
        f"shipped (`mnemo.notes.recall.SPARSE_WEIGHT`): {sparse['shipped']}. " + _gain(sparse, "two rankings") + "\n",
        *table(["weight", *recall_cols], _grid_rows(sparse, ["sparse_weight"], at)),
    ]
