"""The one percentile helper of the benchmarks (:mod:`bench.stats`): numpy's linear
percentiles, rounded, in the shapes of the committed results (their keys, in order)."""

from __future__ import annotations

from bench.common import DEFAULT_OUT, read_json
from bench.stats import ms_percentiles, percentiles, summary


def test_each_shape_is_the_one_the_committed_results_hold():
    load = read_json(DEFAULT_OUT / "load.json")
    store_scale = read_json(DEFAULT_OUT / "store_scale.json")
    assert list(summary([1.0, 2.0])) == list(load["scenarios"][0]["latency_s"]) == ["p50", "p95", "mean", "max", "n"]
    assert list(ms_percentiles([0.001])) == list(store_scale["backends"]["memory"]["1000"]["recall_ms"])


def test_the_figures_are_linear_percentiles_rounded_and_none_without_samples():
    assert summary([4, 1, 3, 2]) == {"p50": 2.5, "p95": 3.85, "mean": 2.5, "max": 4.0, "n": 4}
    assert summary([0.123456], 1) == {"p50": 0.1, "p95": 0.1, "mean": 0.1, "max": 0.1, "n": 1}
    assert ms_percentiles([0.0011, 0.0021, 0.0031]) == {"p50": 2.1, "p95": 3.0, "n": 3}  # seconds -> ms
    assert percentiles(iter([0.81234, 0.9]), (5, 50), 4) == {"p5": 0.8167, "p50": 0.8562}
    assert summary([]) == {"p50": None, "p95": None, "mean": None, "max": None, "n": 0}
    assert ms_percentiles([]) == {"p50": None, "p95": None, "n": 0}
