"""The statistics of ``python -m bench tune`` (its runs: test_bench.py)."""

from __future__ import annotations

from bench.tune_stats import paired_gain


def test_a_paired_gain_is_the_mean_difference_with_its_bootstrap_interval():
    assert paired_gain([0.5] * 40) == {"report_recall@10_gain": 0.5, "bootstrap_95": [0.5, 0.5]}
    mixed = paired_gain([1.0] * 10 + [0.0] * 90)  # 10 questions of 100 gain a whole evidence turn
    assert mixed["report_recall@10_gain"] == 0.1
    low, high = mixed["bootstrap_95"]
    assert 0.0 < low < 0.1 < high < 0.2  # the interval brackets the mean, above 0
    low, high = paired_gain([1.0, -1.0] * 50)["bootstrap_95"]
    assert low < 0.0 < high  # no gain: the interval holds 0
