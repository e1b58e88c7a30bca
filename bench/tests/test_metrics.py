"""The LoCoMo benchmark's arithmetic (bench.locomo_tables; the credit rule of
bench.locomo_write): the recall of a question is the fraction of its evidence
found in the top k, ``overall`` averages categories 1-4 only, and a note is
credited for the turns whose content it still holds. Pinned on hand-made results, then on a run over a made-up
conversation with a refined note."""

from __future__ import annotations

import json

import pytest

from bench.locomo_ask import QuestionResult
from bench.locomo_tables import recall_of, recall_table, snapshot_recall
from bench.locomo_write import credited


def result(
    category: str, evidence: set[str], ranked: list[set[str]], covers: frozenset[str] = frozenset()
) -> QuestionResult:
    r = QuestionResult(
        category=category,
        evidence=frozenset(evidence),
        sessions=frozenset(int(d[1:].split(":")[0]) for d in evidence),
        snapshot_covers=frozenset(covers),
    )
    r.ranked["m"] = [frozenset(item) for item in ranked]
    return r


def test_recall_is_the_fraction_of_the_evidence_found():
    evidence = frozenset({"D1:1", "D1:2", "D2:1", "D2:2"})
    assert recall_of(evidence, {"D1:1"}) == 0.25
    assert recall_of(evidence, {"D1:1", "D2:2", "D9:9"}) == 0.5
    assert recall_of(evidence, set()) == 0.0
    assert recall_of(evidence, set(evidence)) == 1.0


def test_recall_at_k_counts_the_top_k_items_only():
    r = result("1", {"D1:1", "D1:2"}, [{"D1:1"}, {"D3:3"}, {"D1:2"}])
    table = recall_table([r], "m", "turn", [1, 2, 3, 10])
    assert [table[f"recall@{k}"]["1"] for k in (1, 2, 3, 10)] == [0.5, 0.5, 1.0, 1.0]
    # an item covering several turns (a merged note) counts for each of them
    merged = result("1", {"D1:1", "D1:2", "D2:1"}, [{"D1:1", "D1:2"}, {"D2:1"}])
    assert recall_table([merged], "m", "turn", [1])["recall@1"]["1"] == 0.6667


def test_session_recall_counts_the_sessions_of_the_retrieved_turns():
    r = result("2", {"D1:1", "D2:5"}, [{"D1:4"}, {"D3:1"}, {"D2:1"}])
    table = recall_table([r], "m", "session", [1, 2, 3])
    assert [table[f"recall@{k}"]["2"] for k in (1, 2, 3)] == [0.5, 0.5, 1.0]


def test_overall_weights_questions_of_categories_1_to_4_and_leaves_out_5():
    results = [
        result("1", {"D1:1"}, [{"D1:1"}]),  # 1.0
        result("4", {"D1:1", "D1:2"}, [{"D1:1"}]),  # 0.5
        result("4", {"D1:3"}, [{"D9:9"}]),  # 0.0
        result("5", {"D1:4"}, [{"D9:9"}]),  # adversarial: reported apart
    ]
    row = recall_table(results, "m", "turn", [1])["recall@1"]
    assert row == {"overall": 0.5, "1": 1.0, "2": None, "3": None, "4": 0.25, "5": 0.0}
    results[3] = result("5", {"D1:4"}, [{"D1:4"}])
    assert recall_table(results, "m", "turn", [1])["recall@1"]["overall"] == 0.5  # unchanged by category 5
    snapshot = snapshot_recall([*results[:3], result("5", {"D1:4"}, [], covers=frozenset())], "turn")
    assert snapshot["overall"] == 0.0 and snapshot["5"] == 0.0  # nothing shown
    shown = [
        result("4", {"D1:1", "D1:2"}, [], covers=frozenset({"D1:1"})),
        result("5", {"D1:4"}, [], covers=frozenset({"D1:4"})),
    ]
    assert snapshot_recall(shown, "turn") == {"overall": 0.5, "1": None, "2": None, "3": None, "4": 0.5, "5": 1.0}


def test_snapshot_session_recall_counts_the_sessions_of_the_notes_shown():
    shown = [
        result("1", {"D1:1", "D12:3"}, [], covers=frozenset({"D12:9", "D3:1"})),  # session 12 of 1 and 12
        result("2", {"D2:1"}, [], covers=frozenset()),
        result("5", {"D4:1"}, [], covers=frozenset({"D4:2"})),
    ]
    assert snapshot_recall(shown, "session") == {"overall": 0.25, "1": 0.5, "2": 0.0, "3": None, "4": None, "5": 1.0}
    assert snapshot_recall(shown, "turn") == {"overall": 0.0, "1": 0.0, "2": 0.0, "3": None, "4": None, "5": 0.0}


def test_full_context_is_recall_one_by_definition():
    r = result("3", {"D1:1", "D1:2"}, [])
    r.ranked["full_context"] = []
    assert recall_table([r], "full_context", "turn", [1])["recall@1"]["3"] == 1.0


def test_a_note_is_credited_for_the_turns_whose_content_it_holds():
    turns = [
        ("D1:1", "Ana has two cats."),  # refined into the note below: all its words are kept
        ("D1:2", "Ana has two dogs."),  # shares "Ana" and "two", not "dogs"
        ("D1:3", "Ana has two cats, Tom and Jerry."),  # the note's own wording
        ("D1:4", "Ben sings."),  # shares nothing
    ]
    assert credited("Ana has two cats, Tom and Jerry.", turns) == {"D1:1", "D1:3"}
    assert credited("", turns) == frozenset()  # a note gone since (forgotten) covers nothing


@pytest.fixture(scope="module")
def refined_run(tmp_path_factory) -> dict:
    """``python -m bench locomo`` over a made-up conversation (nothing from
    LoCoMo) in which a later turn refines an earlier one's note."""
    from bench.cli import main

    tmp = tmp_path_factory.mktemp("refined")
    turns = [
        ("Ana", "I adopted a cat from the shelter last spring."),
        ("Ben", "My brother lives in Lisbon and teaches mathematics."),
        ("Ana", "I adopted a cat from the shelter last spring, a grey tabby called Miso."),
        ("Ben", "I play the trumpet in a jazz band on Fridays."),
    ]
    session = [{"speaker": s, "dia_id": f"D1:{i}", "text": t} for i, (s, t) in enumerate(turns, start=1)]
    qa = [
        {"question": "What is the name of Ana's cat?", "answer": "Miso", "evidence": ["D1:3"], "category": 4},
        {
            "question": "Where did Ana get her cat, and where does Ben's brother live?",
            "answer": "a shelter; Lisbon",
            "evidence": ["D1:1", "D1:2"],
            "category": 1,
        },
        {
            "question": "What instrument does Ana's brother play?",
            "adversarial_answer": "trumpet",
            "evidence": ["D1:4"],
            "category": 5,
        },
    ]
    conversation = {"speaker_a": "Ana", "speaker_b": "Ben", "session_1": session, "session_1_date_time": "1 May, 2023"}
    data = tmp / "refined.json"
    data.write_text(json.dumps([{"sample_id": "refined-1", "conversation": conversation, "qa": qa}]), encoding="utf-8")
    assert main(["locomo", "--data", str(data), "--out", str(tmp), "--k", "1,2,10", "--quiet"]) == 0
    return json.loads((tmp / "locomo.json").read_text())


def test_a_refined_note_is_credited_for_both_turns(refined_run):
    assert refined_run["mnemo_write"]["statuses"] == {"stored": 3, "refined": 1}  # the precondition
    assert refined_run["mnemo_write"]["merged_turns"] == 1 and refined_run["mnemo_write"]["notes"] == 3
    turn = refined_run["methods"]["mnemo"]["turn"]
    # "Ana's cat" is found first; the mixed question has 2 evidence turns, one per item
    assert turn["recall@1"] == {"overall": 0.75, "1": 0.5, "2": None, "3": None, "4": 1.0, "5": 1.0}
    # D1:1 is found through the note D1:3 refined: with it, both turns of the mixed question
    assert turn["recall@2"] == {"overall": 1.0, "1": 1.0, "2": None, "3": None, "4": 1.0, "5": 1.0}
    assert refined_run["methods"]["full_context"]["turn"]["recall@1"]["overall"] == 1.0
