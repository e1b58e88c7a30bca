"""The attempt of ``python -m bench tune --only rewrite`` (bench.tune_rewrite):
the queries read from a model's reply and the model taken from
``$MNEMO_MODEL`` (its run with a scripted model: test_bench.py)."""

from __future__ import annotations

from bench import tune_rewrite
from bench.locomo_ask import QuestionResult
from bench.tune_rewrite import QUERIES, queries, rewrite_tables


def test_the_queries_are_the_replys_lines_without_marks_repeats_or_the_question():
    reply = '1. Ana hobbies\n- "Ana pottery class"\n\nAna hobbies\nWhat does Ana do?\n* Ana camping trip\nAna swims'
    assert queries("What does Ana do?", reply) == ["Ana hobbies", "Ana pottery class", "Ana camping trip"]
    assert len(queries("q", "\n".join(f"line {i}" for i in range(10)))) == QUERIES
    assert queries("q", "x" * 1000) == ["x" * tune_rewrite.QUERY_CHARS]
    assert queries("q", "  \n\n") == []  # nothing to recall: the ranking stays mnemo's


def test_the_model_is_mnemo_models_and_none_without_it(monkeypatch):
    monkeypatch.delenv("MNEMO_MODEL", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_BASE", raising=False)
    assert tune_rewrite.chat_model() is None
    monkeypatch.setenv("MNEMO_MODEL", "openai:some-model")
    monkeypatch.setenv("OPENAI_API_KEY", "not-used")
    model = tune_rewrite.chat_model()
    assert (model.model_name, model.temperature, model.max_tokens) == ("some-model", 0, 80)
    # an OpenAI-compatible server (llama.cpp, Ollama) reads the cap only as the body's max_tokens
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1")
    model = tune_rewrite.chat_model()
    assert model.max_tokens is None and model.extra_body == {"max_tokens": 80}


def test_without_a_model_the_part_says_so_and_ranks_nothing():
    result = QuestionResult(category="1", evidence=frozenset({"D1:1"}), sessions=frozenset({1}))
    assert rewrite_tables([result], [5, 10])["rewrite"]["model"] is None
