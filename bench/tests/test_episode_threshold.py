"""``EPISODE_MIN_SCORE`` (mnemo.episodes.cases) is the threshold
bench/episode_threshold.py picks on its labelled pairs, not a guess."""

from __future__ import annotations

from bench.episode_threshold import load_pairs, measure, rates, scores
from mnemo.episodes import EPISODE_MIN_SCORE


def test_the_threshold_is_the_measured_one():
    """At the measured threshold few wrong examples get through and most right ones do."""
    result = measure()
    assert result["best"]["threshold"] == EPISODE_MIN_SCORE
    pairs = load_pairs()
    at = rates(pairs, scores(pairs), EPISODE_MIN_SCORE)
    assert at["precision"] >= 0.85 and at["recall"] >= 0.6
