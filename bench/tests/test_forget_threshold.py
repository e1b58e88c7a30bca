"""``FORGET_RULES`` (mnemo.notes.forget) are the rules bench/forget_threshold.py
chose on the tune half of its labelled requests, and the choice is the one its
docstring states."""

from __future__ import annotations

import json

from bench.common import DEFAULT_OUT
from bench.forget_threshold import SCRIPTS, choose, outcome
from mnemo.notes.forget import FORGET_RULES


def test_the_shipped_rules_are_the_ones_chosen_on_the_tune_requests():
    result = json.loads((DEFAULT_OUT / "forget_threshold.json").read_text(encoding="utf-8"))
    for script in SCRIPTS:
        chosen = result["chosen_on_tune"][script]
        assert (chosen["min_score"], chosen["gap"]) == (FORGET_RULES[script].min_score, FORGET_RULES[script].gap)
        assert chosen["tune"]["wrong"] == 0
    assert result["real_path_check"]["agreeing_with_replay"] == result["real_path_check"]["requests"]


def test_a_rule_that_deletes_an_unnamed_note_on_tune_is_never_chosen():
    def row(t, g, exact, wrong):
        return {"script": "LATIN", "min_score": t, "gap": g, "tune": {"exact": exact, "wrong": wrong}}

    table = [row(0.80, 0.0, 30, 1), row(0.82, 0.0, 20, 0), row(0.84, 0.0, 20, 0), row(0.84, 0.01, 20, 0)]
    assert (choose(table, "LATIN")["min_score"], choose(table, "LATIN")["gap"]) == (0.84, 0.01)
    assert choose([row(0.80, 0.0, 30, 1)], "LATIN") is None


def test_an_outcome_counts_any_unnamed_deletion_as_wrong():
    assert outcome({"a"}, {"a"}) == "exact" and outcome(set(), set()) == "exact"
    assert outcome({"a", "b"}, {"a"}) == "wrong" and outcome({"b"}, set()) == "wrong"
    assert outcome(set(), {"a"}) == "asked" and outcome({"a"}, {"a", "b"}) == "partial"
