"""Percentiles of a benchmark's samples, in the shapes its result files keep.

One computation (numpy's linear percentile, rounded; ``None`` where there is
no sample) behind every percentile a result holds: :func:`summary` (p50 /
p95 / mean / max / n: per-turn cost, latencies, CPU), :func:`ms_percentiles`
(seconds as milliseconds, p50 / p95 / n: the store-scale family), both
through :func:`percentiles`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np


def percentiles(values: Iterable[float], qs: Sequence[int] = (50, 95), digits: int = 2) -> dict[str, float | None]:
    """``{"p<q>": percentile}`` of ``values`` for each ``q`` of ``qs``, rounded to
    ``digits``; each ``None`` when there are no values."""
    arr = np.asarray(list(values), dtype=float)
    return {f"p{q}": round(float(np.percentile(arr, q)), digits) if arr.size else None for q in qs}


def summary(values: Iterable[float], digits: int = 2) -> dict[str, Any]:
    """p50 / p95 / mean / max / n of ``values`` (None when empty)."""
    vals = list(values)
    return {
        **percentiles(vals, (50, 95), digits),
        "mean": round(float(np.mean(vals)), digits) if vals else None,
        "max": round(float(max(vals)), digits) if vals else None,
        "n": len(vals),
    }


def ms_percentiles(seconds: Sequence[float]) -> dict[str, Any]:
    """p50 / p95 of ``seconds`` in milliseconds (3 decimals), and n."""
    return {**percentiles([s * 1000 for s in seconds], (50, 95), 3), "n": len(seconds)}
