"""The committed results are what the code computes: a small committed figure,
the recall probe of ``bench/results/thresholds.json`` (hand-written users in
``bench/data/``, no LoCoMo needed), recomputed and compared on every machine.

The embedder's last bits differ between CPUs: the same text's cosines were
measured up to 0.0009 apart between two machines, enough to move a note across
a margin or past another. So the probe is recomputed here with every decision
also taken on scores moved by up to :data:`COSINE_DRIFT` (each hit raised
while the others are lowered, and the reverse, and all of them up or down),
and each committed figure must lie within what those decisions give: a
decision far from every edge must come out exactly as committed."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

import numpy as np

from bench import thresholds_replay
from bench.common import DEFAULT_OUT, CachingEmbeddings
from mnemo.stores.embeddings import embeddings

#: How far one cosine may move between machines (measured: 0.0009), rounded up.
COSINE_DRIFT = 0.001


def _drifted(scores: np.ndarray) -> list[np.ndarray]:
    """``scores`` as another machine may compute them: all up or down by the
    drift, and each one up while the others go down, or the reverse."""
    out = [scores + COSINE_DRIFT, scores - COSINE_DRIFT]
    for i in range(len(scores)):
        for sign in (1.0, -1.0):
            moved = scores - sign * COSINE_DRIFT
            moved[i] = scores[i] + sign * COSINE_DRIFT
            out.append(moved)
    return out


Outcomes = dict[tuple[tuple[str, ...], str, str], list[tuple[list[int], list[int]]]]


def _probe_with_drift(monkeypatch) -> tuple[dict[str, Any], Outcomes]:
    """The probe as computed here, and per (notes, rule, query) every outcome
    (dense hits, returned) of the replay under the drifted scores, this
    machine's first."""
    outcomes: Outcomes = {}
    names: dict[int, str] = {}
    rules, ranked = thresholds_replay.rules, thresholds_replay.ReplayUser.ranked

    def named_rules() -> dict[str, Any]:
        found = rules()
        names.update({id(keep): name for name, keep in found.items()})
        return found

    def drifting(self, scores, query, keep, limit):
        plain = ranked(self, scores, query, keep, limit)
        if id(keep) in names:  # not the real-path check, which compares with the real recall
            key = (tuple(self.texts), names[id(keep)], query)
            outcomes[key] = [plain, *(ranked(self, s, query, keep, limit) for s in _drifted(scores))]
        return plain

    monkeypatch.setattr(thresholds_replay, "rules", named_rules)
    monkeypatch.setattr(thresholds_replay.ReplayUser, "ranked", drifting)
    fresh = json.loads(json.dumps(thresholds_replay.probe_analysis(CachingEmbeddings(embeddings))))  # as written
    return fresh, outcomes


def _bounds(committed_probe: dict[str, Any], outcomes: Outcomes) -> list[str]:
    """Each committed figure that no drifted decision gives (empty: all within)."""
    spec = json.loads(thresholds_replay.PROBE.read_text(encoding="utf-8"))["users"]
    wrong = []
    for user, figures in committed_probe["users"].items():
        notes = tuple(spec[user]["notes"])
        for rule, got in figures["rules"].items():
            lo: dict[str, float] = defaultdict(float)
            hi: dict[str, float] = defaultdict(float)
            for j, (q, note) in enumerate(spec[user]["questions"]):
                target = notes.index(note)
                seen = outcomes[(notes, rule, q)]
                ranks = {returned.index(target) + 1 if target in returned else None for _, returned in seen}
                if got["rank_of_note"][j] not in ranks:
                    wrong.append(f"{user} / {rule} / rank of {q!r}: {got['rank_of_note'][j]}, drift gives {ranks}")
                for figure, values in {
                    "note_kept_by_dense": [target in dense for dense, _ in seen],
                    "note_recalled": [r is not None for r in ranks],
                    "note_first": [r == 1 for r in ranks],
                }.items():
                    lo[figure] += min(values)
                    hi[figure] += max(values)
            passing = [[len(d) for d, _ in outcomes[(notes, rule, q)]] for q in spec[user]["unrelated"]]
            returned = [[len(r) for _, r in outcomes[(notes, rule, q)]] for q in spec[user]["unrelated"]]
            n = len(passing)
            for figure, low, high in [
                *((f, lo[f], hi[f]) for f in ("note_kept_by_dense", "note_recalled", "note_first")),
                ("unrelated_dense_passing_max", max(map(min, passing)), max(map(max, passing))),
                (
                    "unrelated_dense_passing_mean",
                    sum(map(min, passing)) / n - 0.005,
                    sum(map(max, passing)) / n + 0.005,
                ),
                ("unrelated_returned_mean", sum(map(min, returned)) / n - 0.005, sum(map(max, returned)) / n + 0.005),
            ]:
                if not low <= got[figure] <= high:
                    wrong.append(f"{user} / {rule} / {figure}: {got[figure]}, drift gives {low:g} to {high:g}")
    return wrong


def _without_decisions(probe: dict[str, Any]) -> dict[str, Any]:
    """``probe`` with each rule's figures left out (its names kept): what no drift changes."""
    return {**probe, "users": {u: {**v, "rules": sorted(v["rules"])} for u, v in probe["users"].items()}}


def test_the_committed_recall_probe_is_what_the_code_computes(monkeypatch):
    committed = json.loads((DEFAULT_OUT / "thresholds.json").read_text(encoding="utf-8"))["probe"]
    fresh, outcomes = _probe_with_drift(monkeypatch)
    assert fresh["real_path_check"]["queries"] > 0  # the real recall ran
    assert fresh["real_path_check"] == committed["real_path_check"]
    assert _without_decisions(fresh) == _without_decisions(committed)  # the users, their texts, the rules
    assert _bounds(fresh, outcomes) == []  # the precondition: this machine's own figures are within
    assert _bounds(committed, outcomes) == []
