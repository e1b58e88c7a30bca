"""The statistics of ``python -m bench tune`` (:mod:`bench.tune`): a grid's
recall on the tune conversations beside the held-out ones, the setting the
tune part chooses, and its held-out gain over a baseline with a paired
bootstrap interval.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from bench.locomo_ask import QuestionResult
from bench.locomo_data import MAIN_CATEGORIES, TUNE_CONVERSATIONS
from bench.locomo_tables import mean_of, recall_of

#: Paired bootstrap resamples of the held-out questions (:func:`paired_gain`).
BOOTSTRAP_SAMPLES = 10_000


def _parts(results: list[QuestionResult]) -> dict[str, list[QuestionResult]]:
    main = [r for r in results if r.category in MAIN_CATEGORIES]
    return {
        "tune": [r for r in main if r.conversation in TUNE_CONVERSATIONS],
        "report": [r for r in main if r.conversation not in TUNE_CONVERSATIONS],
    }


def _hit(r: QuestionResult, grid: str, setting: Any, k: int) -> float:
    top = r.grids[grid][setting][:k]
    return recall_of(r.evidence, set().union(*top) if top else set())


def _json(setting: Any) -> Any:
    """A grid's setting as JSON holds it (a tuple as a list)."""
    return list(setting) if isinstance(setting, tuple) else setting


def _label(setting: Any) -> str:
    return str(_json(setting))


def paired_gain(diffs: list[float]) -> dict[str, Any]:
    """The mean of paired differences and its bootstrap 95 % interval
    (questions resampled with replacement, :data:`BOOTSTRAP_SAMPLES` times, seed 0)."""
    rng = random.Random(0)
    means = sorted(sum(rng.choices(diffs, k=len(diffs))) / len(diffs) for _ in range(BOOTSTRAP_SAMPLES))
    return {
        "report_recall@10_gain": round(sum(diffs) / len(diffs), 4),
        "bootstrap_95": [round(means[int(0.025 * len(means))], 4), round(means[int(0.975 * len(means)) - 1], 4)],
    }


def grid_table(
    results: list[QuestionResult],
    ks: list[int],
    grid: str,
    settings: list[Any],
    columns: Callable[[Any], dict[str, Any]],
    *,
    shipped: Any,
    baseline: Any = None,
) -> dict[str, Any]:
    """Turn recall (categories 1-4) of every setting on the tune and the
    held-out conversations, the setting the tune part chooses (best R@10,
    then R@5; the held-out figures are reported, never used to choose), and
    with a ``baseline``, the held-out R@10 gain of the chosen setting over
    it, paired bootstrap 95 % interval (:func:`paired_gain`)."""
    parts = _parts(results)
    at = sorted(set(ks) | {5, 10})
    rows = [
        {
            **columns(s),
            **{
                f"{name}_recall@{n}": mean_of([_hit(r, grid, s, n) for r in part])
                for name, part in parts.items()
                for n in at
            },
        }
        for s in settings
    ]
    tuned = [(s, row) for s, row in zip(settings, rows, strict=True) if row["tune_recall@10"] is not None]
    chosen = max(tuned, key=lambda pair: (pair[1]["tune_recall@10"], pair[1]["tune_recall@5"]))[0] if tuned else None
    out: dict[str, Any] = {
        "rule": "chosen = best tune recall@10 (then recall@5); report is held out",
        "rows": rows,
        "chosen_on_tune": _json(chosen),
        "shipped": _json(shipped),
    }
    if baseline is not None:
        gain = None
        if chosen is not None and parts["report"]:
            gain = paired_gain([_hit(r, grid, chosen, 10) - _hit(r, grid, baseline, 10) for r in parts["report"]])
        out["chosen_vs_baseline"] = gain
        report = parts["report"]
        out["per_category_report_recall@10"] = {
            c: {
                _label(s): mean_of([_hit(r, grid, s, 10) for r in report if r.category == c])
                for s in dict.fromkeys([baseline, chosen])
                if s is not None
            }
            for c in MAIN_CATEGORIES
        }
    return out
