"""``python -m bench memory-quality`` reads what it scores (issue 42, point 5).

A few conversations of the labelled set go through ``./scripts/dev`` with the
stub model server (``harness/stub_openai.py``: its extraction stores "I'm X" as
the name, "I live in Y" as the city, "I'm allergic to Z" as a note), so what
the stub stores is known and the score must say exactly that. The quality
figures themselves come from a real model, on demand, never from a test.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.memory_quality import _running, run
from bench.quality_score import DEFAULT_SET, load_set, rescore, score_one
from harness.stub_openai import StubServer

IDS = {"en-third-1", "en-allergy-1", "en-hypo-1"}


def test_the_set_is_split_in_halves_balanced_by_language_and_kind():
    conversations = load_set(DEFAULT_SET)
    assert len(conversations) >= 40
    cells: dict[tuple[str, str], list[str]] = {}
    for c in conversations:
        cells.setdefault((c["lang"], c["kind"]), []).append(c["split"])
    assert {lang for lang, _ in cells} == {"en", "zh"}
    assert all(sorted(splits) == ["held_out", "tune"] for splits in cells.values()), cells
    assert len(load_set(DEFAULT_SET, "tune")) == len(load_set(DEFAULT_SET, "held_out")) == len(conversations) // 2


def test_matching_is_a_case_insensitive_substring_of_any_alternative():
    label = {
        "expect": {"profile": {"city": ["Bristol"], "name": ["Kate"]}, "notes": [["peanut", "花生"], ["latex"]]},
        "forbid": ["Suzhou"],
        "forbid_profile": ["Leeds"],
        "probes": [{"ask": "Where?", "in_prompt": ["bristol"]}, {"ask": "Who?", "in_prompt": ["Kate"]}],
    }
    got = {
        "profile": {"city": "bristol", "name": "Katherine"},
        "notes": ["用户对花生过敏。", "The user moved from Leeds."],
        "probes": [{"ask": "Where?", "system_prompt": '- city: "Bristol"'}, {"ask": "Who?", "system_prompt": None}],
    }
    s = score_one(label, got)
    assert s["profile_right"] == ["city"] and s["profile_wrong"] == {"name": "Katherine"}
    assert (s["notes_recalled"], s["notes_expected"], s["notes_missed"]) == (1, 2, [["latex"]])
    assert s["forbidden_stored"] == []  # "Leeds" in a note is not a profile value
    assert (s["probes_reached"], s["probes"]) == (1, 2)
    got["notes"].append("The user lives in SUZHOU.")
    assert score_one(label, got)["forbidden_stored"] == ["Suzhou"]


@pytest.mark.e2e
def test_the_harness_scores_what_the_server_stored_and_the_probes_saw(tmp_path: Path):
    labels = [c for c in load_set(DEFAULT_SET) if c["id"] in IDS]
    # A copy of en-allergy-1 that forbids what the stub stores: a false memory the score must count.
    allergy = next(c for c in labels if c["id"] == "en-allergy-1")
    labels.append({**allergy, "id": "en-allergy-1-forbidden", "forbid": ["peanut"]})
    # en-hypo-1 labelled with a city the user never said: a wrong value the score must count.
    labels = [
        {**c, "expect": {"profile": {"city": ["Tucson"]}}, "probes": [{**c["probes"][0], "in_prompt": ["Tucson"]}]}
        if c["id"] == "en-hypo-1"
        else c
        for c in labels
    ]
    data = tmp_path / "set.json"
    data.write_text(json.dumps({"conversations": labels}, ensure_ascii=False))
    with StubServer() as stub:
        result = run(tmp_path / "out", server=_running(stub.base_url, "stub-model"), data=data, settle_s=0.5)
    got = {c["id"]: c for c in result["conversations"]}
    assert got["en-third-1"]["profile"] == {"name": "Tomasz", "city": "Gdansk"}
    assert got["en-third-1"]["score"]["profile_right"] == ["name", "city"]
    assert "Gdansk" in got["en-third-1"]["probes"][0]["system_prompt"]
    assert got["en-third-1"]["score"]["probes_reached"] == 1
    # "Phoenix, where I live" is the city (read in code): against a label of Tucson the score says it is wrong
    # and the probe's prompt lacks the label's.
    assert got["en-hypo-1"]["profile"] == {"city": "Phoenix"}
    assert got["en-hypo-1"]["score"]["profile_wrong"] == {"city": "Phoenix"}
    assert got["en-hypo-1"]["probes"][0]["system_prompt"] and got["en-hypo-1"]["score"]["probes_reached"] == 0
    assert got["en-allergy-1"]["notes"] == ["The user is allergic to peanuts."]
    assert got["en-allergy-1"]["score"]["forbidden_stored"] == []
    assert got["en-allergy-1-forbidden"]["score"]["forbidden_stored"] == ["peanut"]
    overall = result["figures"]["all"]["all"]
    assert overall["false_memories"] == 1 and overall["false_memory_ids"] == ["en-allergy-1-forbidden"]
    assert overall["profile_accuracy"] == 0.8  # 4 of 5: name and city of en-third-1, Sam twice; not Tucson
    assert overall["note_recall"] == 1.0 and overall["reach"] == 0.75
    assert all(t["status"] == "success" and t["requests"] >= 1 for c in got.values() for t in c["turns"])
    assert result["meta"]["model"] == "stub-model" and result["meta"]["commit"]
    # What was kept scores again to the same figures, without the server.
    path = tmp_path / "out" / "memory_quality_stub-model.json"
    assert rescore(path, data)["figures"] == result["figures"]


def test_the_servers_warnings_are_kept_as_langgraph_dev_prints_them():
    from bench.memory_quality import server_warnings

    log = "\n".join(
        [
            "\x1b[2m2026-12-04T13:54:12Z\x1b[0m [\x1b[33m\x1b[1mwarning  \x1b[0m] \x1b[1mthe model wrote its tool call",
            "2026-12-04T13:54:13Z [info     ] Background run succeeded [langgraph_api.worker]",
            "WARNING:mnemo.writing.grounding:memory extraction: 1 note(s) not stored",
            "2026-12-04T13:54:14Z [error    ] Slow graph load.",
        ]
    )
    assert server_warnings(log) == [
        "2026-12-04T13:54:12Z [warning  ] the model wrote its tool call",
        "WARNING:mnemo.writing.grounding:memory extraction: 1 note(s) not stored",
        "2026-12-04T13:54:14Z [error    ] Slow graph load.",
    ]


def test_an_interrupted_run_keeps_the_conversations_it_measured(tmp_path: Path, monkeypatch):
    import harness.devserver
    from bench import memory_quality

    class Server:  # no ./scripts/dev: what is checked is the results file
        def __init__(self, *args: object) -> None:
            pass

        start = stop = lambda self: None  # noqa: E731

    labels = [c for c in load_set(DEFAULT_SET) if c["id"] in ("en-name-1", "en-name-2")]
    calls: list[str] = []

    async def conversation(server, proxy, label, context, settle_s):
        calls.append(label["id"])
        if len(calls) == 2:
            raise KeyboardInterrupt  # the person running it gave up on a slow model
        return {**label, "profile": {"name": "Priya"}, "notes": [], "probes": [], "turns": []}

    monkeypatch.setattr(harness.devserver, "DevServer", Server)
    monkeypatch.setattr(harness.devserver, "copy_project", lambda dest: dest)
    monkeypatch.setattr(harness.devserver, "write_dotenv", lambda *a, **k: None)
    monkeypatch.setattr(memory_quality, "conversation", conversation)
    with pytest.raises(KeyboardInterrupt):
        run(tmp_path, server=_running("http://127.0.0.1:9/v1", "slow"), only={c["id"] for c in labels})
    kept = json.loads((tmp_path / "memory_quality_slow.json").read_text())
    assert calls == ["en-name-1", "en-name-2"] and kept["meta"]["partial"] == "1/2"
    assert [c["id"] for c in kept["conversations"]] == ["en-name-1"]
    assert kept["figures"]["all"]["all"]["profile_accuracy"] == 1.0


@pytest.mark.parametrize(
    ("name", "size"),
    [
        ("memory_quality_blind.json", 16),
        ("memory_quality_blind2.json", 20),
        ("memory_quality_blind3.json", 20),
        ("memory_quality_blind4.json", 20),
        ("memory_quality_blind5.json", 20),
        ("memory_quality_blind6.json", 20),
        ("memory_quality_blind7.json", 20),
        ("memory_quality_blind8.json", 20),
        ("memory_quality_blind9.json", 20),
        ("memory_quality_blind10.json", 20),
        ("memory_quality_blind11.json", 20),
        ("memory_quality_blind12.json", 20),
        ("memory_quality_blind13.json", 20),
        ("memory_quality_blind14.json", 20),
        ("memory_quality_blind15.json", 20),
        ("memory_quality_blind16.json", 20),
        ("memory_quality_blind17.json", 20),
    ],
)
def test_each_blind_set_is_held_out_only_one_conversation_per_language_and_kind(name, size):
    """bench/data/memory_quality_blind*.json: each written by someone who read nothing of mnemo, never tuned on
    (the second after the first's failures were fixed: docs/bench.md#memory-quality)."""
    blind = load_set(DEFAULT_SET.with_name(name))
    assert len(blind) == size and {c["split"] for c in blind} == {"held_out"}
    cells = {(c["lang"], c["kind"]) for c in blind}
    assert len(cells) == size and {lang for lang, _ in cells} == {"en", "zh"}
    assert not {c["id"] for c in blind} & {c["id"] for c in load_set(DEFAULT_SET)}
