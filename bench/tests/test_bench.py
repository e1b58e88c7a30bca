"""The benchmark harness runs and writes well-formed results (``--smoke``).

CI proves that every ``python -m bench`` command works end to end and that
its JSON has the documented shape; it never asserts a speed or a recall
level (those depend on the machine and on the data). LoCoMo itself is not
needed: a tiny conversation in LoCoMo's layout is written by the test (made
up here, nothing copied from the dataset), including the malformed evidence
ids the real file has.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bench import tune
from bench.cli import main

REPO = Path(__file__).resolve().parents[2]

TURNS = [
    # session 1
    ("Ana", "Hi Ben! I finally adopted a puppy last week, her name is Luna."),
    ("Ben", "Congrats! What breed is Luna?"),
    ("Ana", "She is a border collie, very energetic.", "a photo of a black and white dog on a lawn"),
    ("Ben", "I started training for the city marathon in October."),
    ("Ana", "That is great, how many kilometres do you run a week?"),
    ("Ben", "About forty kilometres, mostly in the mornings."),
    # session 2
    ("Ana", "I moved to a new apartment near the river."),
    ("Ben", "Nice! Is it big enough for Luna?"),
    ("Ana", "Yes, and there is a park next door where she plays."),
    ("Ben", "I hurt my knee, so the marathon is on hold."),
    ("Ana", "Sorry to hear that. Are you seeing a physiotherapist?"),
    ("Ben", "Yes, twice a week until December."),
    # session 3
    ("Ana", "Luna learned to catch a frisbee!"),
    ("Ben", "I'm back to running, slowly."),
]
SESSIONS = [(1, 0, 6), (2, 6, 12), (3, 12, 14)]


def synthetic_locomo(path: Path) -> Path:
    conversation: dict[str, Any] = {"speaker_a": "Ana", "speaker_b": "Ben"}
    for number, start, end in SESSIONS:
        conversation[f"session_{number}_date_time"] = f"10:00 am on {number} May, 2023"
        session = []
        for i, turn in enumerate(TURNS[start:end], start=1):
            row = {"speaker": turn[0], "dia_id": f"D{number}:{i}", "text": turn[1]}
            if len(turn) > 2:
                row["blip_caption"] = turn[2]
            session.append(row)
        conversation[f"session_{number}"] = session
    qa = [
        {"question": "What is the name of Ana's dog?", "answer": "Luna", "evidence": ["D1:1"], "category": 4},
        {"question": "What breed is Ana's dog?", "answer": "border collie", "evidence": ["D1:3"], "category": 4},
        {"question": "When is Ben's marathon?", "answer": "October", "evidence": ["D1:4"], "category": 2},
        {
            "question": "Why did Ben pause his marathon training?",
            "answer": "knee",
            "evidence": ["D1:4; D2:4"],
            "category": 1,
        },  # two ids in one string, as in the real file
        {"question": "Where does Luna play?", "answer": "the park", "evidence": ["D:2:3"], "category": 3},
        {
            "question": "How often does Ben see a physiotherapist?",
            "answer": "twice a week",
            "evidence": ["D2:6", "D9:99"],
            "category": 4,
        },  # one id matches no turn
        {"question": "What did Ben's cat learn?", "adversarial_answer": "frisbee", "evidence": ["D3:1"], "category": 5},
        {"question": "What does Ana think of running?", "answer": "n/a", "evidence": ["D"], "category": 3},
    ]
    path.write_text(
        json.dumps([{"sample_id": "synthetic-1", "conversation": conversation, "qa": qa}]), encoding="utf-8"
    )
    return path


@pytest.fixture(scope="module")
def locomo_file(tmp_path_factory) -> Path:
    return synthetic_locomo(tmp_path_factory.mktemp("data") / "locomo-synthetic.json")


def _fraction(x) -> bool:
    return x is None or (isinstance(x, (int, float)) and 0.0 <= x <= 1.0)


def test_loader_parses_malformed_evidence_leniently(locomo_file):
    from bench.locomo_data import load_locomo

    (conv,) = load_locomo(locomo_file)
    assert len(conv.turns) == len(TURNS)
    assert "[shares an image: a photo of a black and white dog" in conv.turns[2].text
    by_question = {q.question: q for q in conv.questions}
    assert by_question["Why did Ben pause his marathon training?"].evidence == ["D1:4", "D2:4"]
    assert by_question["Where does Luna play?"].evidence == ["D2:3"]
    assert by_question["How often does Ben see a physiotherapist?"].unmatched == ["D9:99"]
    assert by_question["What does Ana think of running?"].evidence == []


def odd_locomo(path: Path) -> Path:
    """LoCoMo's layout with what other parts of the data hold and the public
    split does not: repeated turns, a turn without text, an image without a
    caption, a NUL character, a turn that is not an object, questions without
    evidence (missing, empty, a bare string), one without a question, a
    conversation without questions and one without turns."""
    session_1 = [
        {"speaker": "Ana", "dia_id": "D1:1", "text": "See you tomorrow!"},
        {"speaker": "Ben", "dia_id": "D1:2", "text": "See you tomorrow!"},  # same text: the template's batch bug
        {"speaker": "Ana", "dia_id": "D1:3", "text": ""},  # no text
        {"speaker": "Ben", "dia_id": "D1:4", "img_url": ["http://example.invalid/1.jpg"]},  # image, no caption
        {"speaker": "Ana", "dia_id": "D1:5", "text": "My bike is red\x00."},
        "not a turn",
        {"speaker": "Ben", "dia_id": "D1:6", "text": "See you tomorrow!"},  # repeats D1:2 word for word
    ]
    qa = [
        {"question": "What colour is Ana's bike?", "answer": "red", "evidence": "D1:5", "category": 4},
        {"question": "Who said goodbye?", "answer": "both", "evidence": ["D1:1", "D1:2"], "category": "1"},
        {"question": "What did Ben share?", "answer": "an image", "category": 4},  # no evidence at all
        {"question": "Anything else?", "answer": "no", "evidence": [], "category": 3},
        {"answer": "a question without a question", "evidence": ["D1:1"], "category": 4},
    ]
    data = [
        {
            "sample_id": "odd-1",
            "conversation": {
                "speaker_a": "Ana",
                "speaker_b": "Ben",
                "session_1": session_1,
                "session_1_date_time": "1 May, 2023",
            },
            "qa": qa,
        },
        {"sample_id": "odd-2", "conversation": {"session_1": [{"speaker": "C", "dia_id": "D1:1", "text": "Hi."}]}},
        {"sample_id": "odd-3", "conversation": {}, "qa": [{"question": "?", "evidence": ["D1:1"], "category": 4}]},
    ]
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_every_method_runs_on_an_odd_locomo_file(tmp_path):
    from bench.locomo_data import load_locomo

    path = odd_locomo(tmp_path / "odd.json")
    odd, other, empty = load_locomo(path)
    assert [t.dia_id for t in odd.turns] == ["D1:1", "D1:2", "D1:3", "D1:4", "D1:5", "D1:6"]
    assert "\x00" not in odd.turns[4].text and odd.turns[3].text == "Ben: [shares an image]"
    assert [q.evidence for q in odd.questions] == [["D1:5"], ["D1:1", "D1:2"], [], []]
    assert other.questions == [] and empty.turns == []
    assert main(["locomo", "--data", str(path), "--out", str(tmp_path / "out"), "--k", "1,5"]) == 0
    data = json.loads((tmp_path / "out" / "locomo.json").read_text())
    assert data["mnemo_write"]["turns"] == 7 and data["mnemo_write"]["statuses"]["duplicate"] >= 1
    assert data["questions"]["4"] == 1 and data["questions_without_evidence"]["4"] == 2
    for name in ("mnemo", "memory_agent", "bm25"):
        assert data["methods"][name]["turn"]["recall@5"]["4"] == 1.0, name  # the bike question finds its turn


@pytest.fixture(scope="module")
def locomo_json(locomo_file, tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("locomo")
    assert main(["locomo", "--data", str(locomo_file), "--out", str(out), "--smoke", "--k", "1,3,5"]) == 0
    assert (out / "locomo_recall.png").stat().st_size > 0
    return json.loads((out / "locomo.json").read_text())


def test_locomo_json_has_the_documented_shape(locomo_json):
    data = locomo_json
    assert set(data["questions"]) == {"1", "2", "3", "4", "5"}
    assert sum(data["questions"].values()) > 0
    assert data["questions_without_evidence"]["3"] >= 1  # the "D" evidence id
    assert data["evidence"]["unmatched"] >= 2
    assert {"mnemo", "memory_agent", "bm25", "full_context"} <= set(data["methods"])
    for name, method in data["methods"].items():
        for level in ("turn", "session"):
            assert set(method[level]) == {"recall@1", "recall@3", "recall@5"}, (name, level)
            for row in method[level].values():
                assert set(row) == {"overall", "1", "2", "3", "4", "5"}
                assert all(_fraction(v) for v in row.values()), (name, level, row)
                assert row["overall"] is not None
    assert data["methods"]["full_context"]["turn"]["recall@1"]["overall"] == 1.0
    assert data["mnemo_write"]["turns"] == 12  # --smoke keeps the first two sessions
    assert data["token_cost"]["full_context"] > 0
    assert data["reference"]["turn"]["recall@5"] == 0.567


@pytest.fixture(scope="module")
def golden_json(locomo_file, tmp_path_factory) -> dict:
    """The whole synthetic conversation (14 turns), k up to 25."""
    out = tmp_path_factory.mktemp("golden")
    assert main(["locomo", "--data", str(locomo_file), "--out", str(out), "--k", "1,5,10,25"]) == 0
    return json.loads((out / "locomo.json").read_text())


@pytest.fixture(scope="module")
def tune_json(locomo_file, tmp_path_factory) -> dict:
    """``python -m bench tune`` on the whole synthetic conversation."""
    out = tmp_path_factory.mktemp("tune")
    assert main(["tune", "--data", str(locomo_file), "--out", str(out), "--k", "1,5,10,25", "--quiet"]) == 0
    assert not (out / "locomo.json").exists()  # tune writes its own file
    return json.loads((out / "tune.json").read_text())


def test_locomo_runs_the_headline_methods_and_no_grid(golden_json):
    assert list(golden_json["methods"]) == ["mnemo", "memory_agent", "bm25", "full_context"]
    assert not {"fusion_grid", "sparse_grid"} & set(golden_json)
    assert golden_json["meta"]["command"] == "locomo"


def test_tune_adds_the_ablations_and_the_grids(golden_json, tune_json):
    assert list(tune_json["methods"]) == [*golden_json["methods"], *tune.ABLATIONS]
    assert tune_json["meta"]["command"] == "tune"
    for name in golden_json["methods"]:  # the headline methods come out as in locomo.json
        assert tune_json["methods"][name]["turn"] == golden_json["methods"][name]["turn"], name
    assert len(tune_json["sparse_grid"]["rows"]) == len(tune.SPARSE_GRID)


def test_golden_a_known_question_finds_its_turn(golden_json, tune_json):
    # the only temporal question: "When is Ben's marathon?", evidence D1:4
    assert golden_json["questions"]["2"] == 1
    for method in ("mnemo", "memory_agent"):
        assert golden_json["methods"][method]["turn"]["recall@1"]["2"] == 1.0, method
    assert tune_json["methods"]["mnemo_dense"]["turn"]["recall@1"]["2"] == 1.0


def test_golden_recall_never_drops_as_k_grows(golden_json):
    for name, method in golden_json["methods"].items():
        for level in ("turn", "session"):
            rows = [method[level][f"recall@{k}"] for k in (1, 5, 10, 25)]
            for cat in ("overall", "1", "2", "3", "4", "5"):
                values = [row[cat] for row in rows if row[cat] is not None]
                assert values == sorted(values), (name, level, cat, values)


def test_golden_the_template_returns_ten_at_most(tune_json):
    for name in ("memory_agent", "memory_agent_plain"):
        method = tune_json["methods"][name]
        assert method["items_returned"]["recall@10"] == 10.0  # 14 turns: the limit binds
        assert method["items_returned"]["recall@25"] == method["items_returned"]["recall@10"]
        assert method["turn"]["recall@25"] == method["turn"]["recall@10"], name


def test_golden_split_reports_conversations_nobody_tuned_on(golden_json):
    split = golden_json["split"]
    assert split["tune_conversations"] == [] and split["report_conversations"] == ["synthetic-1"]
    assert split["report"]["turn"]["mnemo"] == golden_json["methods"]["mnemo"]["turn"]


def test_golden_what_load_memory_injects_is_credited(golden_json):
    # The prompt quotes every remembered value; the bench must still find
    # the notes it shows (it credited none when it looked for unquoted ids).
    snapshot = golden_json["token_cost"]["mnemo_snapshot"]
    assert snapshot["notes_shown"] > 0
    assert snapshot["turn"]["2"] == 1.0  # "When is Ben's marathon?": its turn is shown


def test_golden_fusion_grid_chooses_on_tune_only(tune_json):
    grid = tune_json["fusion_grid"]
    assert len(grid["rows"]) == 15 and grid["shipped"] == [10, 0.3]
    # The synthetic file has no tune conversation: nothing may be chosen on it.
    assert grid["chosen_on_tune"] is None
    assert all(row["tune_recall@10"] is None and row["report_recall@10"] is not None for row in grid["rows"])


def test_an_embedding_cache_makes_a_rerun_embed_nothing_and_change_nothing(
    locomo_file, golden_json, tmp_path, monkeypatch
):
    from bench import common

    monkeypatch.setattr(common, "CACHE_DIR", tmp_path / "cache")  # by default, one file per fingerprint there
    first, second = tmp_path / "first", tmp_path / "second"
    written = []
    for out in (first, second):
        assert main(["locomo", "--data", str(locomo_file), "--out", str(out), "--k", "1,5,10,25", "--quiet"]) == 0
        (cache,) = (tmp_path / "cache").iterdir()
        written.append(cache.stat().st_mtime_ns)
    assert cache.name == f"embeddings-{common.embedder_fingerprint()}.pkl"
    assert written[1] == written[0]  # a run that embedded nothing leaves the file alone
    runs = [json.loads((out / "locomo.json").read_text()) for out in (first, second)]
    assert runs[0]["embedding_cache"]["misses"] > 0 and runs[0]["embedding_cache"]["loaded_from_disk"] == 0
    assert runs[1]["embedding_cache"]["misses"] == 0
    # the first run embedded every text up front, in batches: the store asked for none it lacked
    assert runs[0]["embedding_cache"]["misses_outside_warm"] == 0
    assert runs[1]["embedding_cache"]["loaded_from_disk"] == runs[0]["embedding_cache"]["cached_vectors"]
    for run in runs:  # the same results as the run without a cache
        assert run["methods"]["mnemo"]["turn"] == golden_json["methods"]["mnemo"]["turn"]


def test_quiet_shows_no_progress(locomo_file, tmp_path):
    def stderr(*flags: str) -> str:
        args = ["locomo", "--smoke", "--no-embedding-cache", "--data", str(locomo_file), "--out", str(tmp_path)]
        run = subprocess.run(
            [sys.executable, "-m", "bench", *args, *flags], cwd=REPO, capture_output=True, text=True, timeout=600
        )
        assert run.returncode == 0, run.stderr[-3000:]
        return run.stderr

    shown = stderr()
    assert "notes written" in shown and "questions asked" in shown and "q/s" in shown  # the bars, by default
    quiet = stderr("--quiet")
    assert "done in" in quiet  # the run's last line still comes
    assert "notes written" not in quiet and "questions asked" not in quiet and "q/s" not in quiet
    # as users run it: the JSON records the command line, the plots are drawn
    assert json.loads((tmp_path / "locomo.json").read_text())["meta"]["argv"].startswith("python -m bench locomo")
    for name in ("locomo_recall.png", "locomo_categories.png"):
        assert (tmp_path / name).stat().st_size > 0


def test_a_missing_data_file_is_a_clear_error(tmp_path):
    run = subprocess.run(
        [sys.executable, "-m", "bench", "locomo", "--data", str(tmp_path / "missing.json"), "--out", str(tmp_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 2
    assert "not found" in run.stderr


@pytest.mark.e2e
def test_load_smoke_holds_memory_under_concurrency_and_a_kill(tmp_path):
    """`python -m bench load --smoke`: every scenario (default store,
    PostgreSQL, PostgreSQL with a SIGKILL mid-run) ends with every write of a
    successful turn found once, and no prompt showing another user's memory."""
    assert main(["load", "--smoke", "--out", str(tmp_path)]) == 0
    data = json.loads((tmp_path / "load.json").read_text())
    assert [s["sigkills"] for s in data["scenarios"]] == [0, 0, 1]
    for s in data["scenarios"]:  # the server's CPU per turn, alone and under load (a figure, not a bound)
        assert s["cpu_ms_per_turn_quiet"] > 0
        assert (s["cpu_ms_per_turn_loaded"] is None) == (s["sigkills"] > 0)
        assert s["sigkills"] or s["cpu_loaded_over_quiet"] > 0
    for s in data["scenarios"]:
        assert s["turns_succeeded"] == s["users"] * s["turns_per_user"], s
        assert s["prompts_with_own_name"] > 0 and s["cross_user_reads"] == 0, s
        assert s["notes_found"] == s["notes_expected"] > 0 and s["notes_doubled"] == 0, s
        assert s["profile_fields_found"] == s["profile_fields_expected"] > 0, s
        assert s["server_log_trouble"] == 0, s
    assert (tmp_path / "load.png").exists()


def test_memory_scale_smoke_reads_in_two_round_trips_at_every_size(tmp_path):
    from bench import memory_scale

    assert (
        memory_scale.main(
            ["--sizes", "50", "300", "--backends", "memory", "--queries", "3", "--no-e5", "--out", str(tmp_path)]
        )
        == 0
    )
    data = json.loads((tmp_path / "memory_scale.json").read_text())
    for size in ("50", "300"):
        row = data["backends"]["memory"][size]
        assert row["load_memory"]["round_trips_max"] <= 2 and row["recall"]["round_trips_max"] <= 2
        assert row["recall"]["lexical_found"] == 1.0


def test_many_users_smoke_measures_recall_against_exact(tmp_path):
    from bench import many_users

    assert (
        many_users.main(
            [
                "--notes",
                "400",
                "--users",
                "30",
                "--per-band",
                "2",
                "--queries",
                "1",
                "--settings",
                "strict_100",
                "--out",
                str(tmp_path),
            ]
        )
        == 0
    )
    data = json.loads((tmp_path / "many_users.json").read_text())
    assert data["sizes"]["notes"] == 400 and data["sizes"]["users"] == 30
    for band in ("large", "medium", "small"):
        row = data["settings"]["strict_100"][band]
        assert _fraction(row["recall_at_10"]) and row["search_ms"]["n"] == 2
