"""nodes.context.Context: every number a client can send is clamped into the
range its field documents, whatever the value (mnemo.core.limits.clamp); the
operator's model-client settings too (nodes.chat_models.client_settings)."""

from __future__ import annotations

import dataclasses
import inspect
import re
import typing

import pytest

from mnemo import InvalidInputError
from nodes.chat_models import client_settings
from nodes.context import Context

HUGE = 1e12


def documented_range(name: str) -> tuple[float, float]:
    """``(lo, hi)`` as the description of ``Context.<name>`` ends: "... lo-hi."
    (what LangGraph Studio and the assistants API show): the field's
    ``description`` metadata, else its attribute docstring."""
    (field,) = [f for f in dataclasses.fields(Context) if f.name == name]
    doc = field.metadata.get("description") or ""
    if not doc:
        source = inspect.getsource(Context)
        doc = source.split(f"    {name}:", 1)[1].split('"""', 2)[1]
    found = re.search(r"(\d+(?:\.\d+)?)-(\d+(?:\.\d+)?)\.\s*$", doc)
    assert found, f"Context.{name} documents no range"
    return float(found[1]), float(found[2])


def numeric_knobs() -> dict[str, type]:
    """Every number field of Context (a new one is covered without editing this test)."""
    hints = typing.get_type_hints(Context)
    return {f.name: hints[f.name] for f in dataclasses.fields(Context) if hints[f.name] in (int, float)}


def test_the_numeric_knobs_are_the_ones_a_client_can_tune():
    # The precondition of the tests below: they range over every numeric field.
    assert set(numeric_knobs()) == {
        "extraction_timeout_s",
        "recall_limit",
        "recent_limit",
        "recall_margin",
        "memory_char_budget",
        "episode_limit",
        "episode_min_score",
        "episode_char_budget",
        "history_token_budget",
        "memory_write_delay_s",
    }


@pytest.mark.parametrize("name", sorted(numeric_knobs()))
def test_every_knob_is_clamped_into_its_documented_range_at_plus_and_minus_1e12(name):
    lo, hi = documented_range(name)
    kind = numeric_knobs()[name]
    for sent, expected in ((HUGE, hi), (-HUGE, lo), (int(HUGE), hi), (-int(HUGE), lo)):
        value = getattr(Context(user_id="u", **{name: sent}), name)
        assert value == expected, (name, sent, value)
        assert type(value) is kind, (name, sent, type(value))
    default = getattr(Context(user_id="u"), name)
    assert lo <= default <= hi and type(default) is kind  # the default is in range, of its type
    inside = (lo + hi) / 2
    assert getattr(Context(user_id="u", **{name: inside}), name) == (int(inside) if kind is int else inside)


@pytest.mark.parametrize("name", sorted(n for n, kind in numeric_knobs().items() if kind is float))
def test_a_float_knob_refuses_nan_and_infinities_with_its_name(name):
    assert getattr(Context(user_id="u", **{name: 0.5}), name) is not None  # the precondition: a float is accepted
    for bad in (float("nan"), float("inf"), float("-inf"), "nan", "inf"):
        with pytest.raises(InvalidInputError, match=name):
            Context(user_id="u", **{name: bad})


@pytest.mark.parametrize(
    ("sent", "timeout", "retries", "cap"),
    [(str(HUGE), 600.0, 10, 65536), (str(-HUGE), 1.0, 0, 16), ("2.5", 2.5, 2, 16)],
)
def test_the_model_client_settings_are_clamped(monkeypatch, sent, timeout, retries, cap):
    for name in ("MNEMO_MODEL_TIMEOUT_S", "MNEMO_MODEL_MAX_RETRIES", "MNEMO_MODEL_MAX_TOKENS"):
        monkeypatch.setenv(name, sent)
    settings = client_settings()
    assert settings == {"timeout": timeout, "max_retries": retries, "max_tokens": cap}
    assert type(settings["timeout"]) is float and type(settings["max_retries"]) is int
    assert type(settings["max_tokens"]) is int


def test_a_knob_that_is_not_a_number_is_refused_with_its_name_and_type():
    with pytest.raises(InvalidInputError, match="recall_limit must be a number, got list"):
        Context(user_id="u", recall_limit=[1])
    with pytest.raises(InvalidInputError, match="recall_margin must be a number, got 'many'"):
        Context(user_id="u", recall_margin="many")


def test_a_choice_outside_its_values_is_refused_with_its_name_and_values():
    with pytest.raises(InvalidInputError) as exc:
        Context(user_id="u", memory_write_mode="later")
    assert str(exc.value) == "memory_write_mode must be one of 'hot', 'after_turn', 'background', got 'later'"
    assert Context(user_id="u", memory_write_mode="background").memory_write_mode == "background"


def test_the_retired_recall_min_score_is_ignored_and_said_so(caplog):
    Context(user_id="u")
    assert not caplog.records  # not sent: nothing said
    with caplog.at_level("WARNING", logger="nodes.context"):
        Context(user_id="u", recall_min_score=0.9)
    assert [r.getMessage() for r in caplog.records] == [
        "context recall_min_score is ignored: relevance is now set by recall_margin"
    ]


def test_the_schema_the_platform_asks_for_per_run_reads_no_source(monkeypatch):
    """The server builds the context's JSON schema for every run that sends a context: every field
    keeps its description without pydantic reading this file's source (docstrings) each time."""
    import inspect

    from graphs.agent import graph

    def no_source(*args, **kwargs):
        raise AssertionError("the context schema read a source file")

    monkeypatch.setattr(inspect, "getsourcelines", no_source)
    props = graph.get_context_jsonschema()["properties"]
    assert "recall_margin" in props and props["recall_min_score"]["description"].startswith("Deprecated and ignored")
    assert all(p.get("description") for p in props.values()), props
