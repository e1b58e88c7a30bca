"""mnemo.writing.extraction: what the extractor is shown, and a failed extraction
skipping the write (never the turn) with its reason logged."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from mnemo.notes import now
from mnemo.writing.extraction import TIMED_OUT, MemoryExtraction, aextract


class Extractor:
    """Answers each call with ``answer`` (raised when an exception), recording the prompts."""

    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.prompts: list[list] = []

    async def ainvoke(self, prompt: list) -> Any:
        self.prompts.append(prompt)
        if isinstance(self.answer, BaseException):
            raise self.answer
        if self.answer == "slow":
            await asyncio.sleep(5)
        return self.answer


async def test_the_extractor_is_shown_the_users_words_as_data_and_todays_date():
    extractor = Extractor(MemoryExtraction(city="Paris"))
    found = await aextract(
        extractor, ["  ", "  I live in Paris. ", ""], timeout_s=5, existing=[("n1", "The user has a cat.")]
    )
    assert found == MemoryExtraction(city="Paris")
    ((system, data),) = extractor.prompts
    assert isinstance(system, SystemMessage) and f"Today is {now().date().isoformat()} (UTC)." in system.text
    assert isinstance(data, HumanMessage)
    assert data.text == (
        '<user_messages>\n- "I live in Paris."\n</user_messages>\n'
        '<existing_notes>\n- "The user has a cat."  (id "n1")\n</existing_notes>'
    )


async def test_blank_words_call_no_extractor():
    extractor = Extractor(MemoryExtraction(city="Paris"))
    assert await aextract(extractor, ["", " \n "], timeout_s=5) is None
    assert extractor.prompts == []


@pytest.mark.parametrize(
    ("answer", "level", "message", "traceback"),
    [
        (
            "slow",
            "WARNING",
            "memory extraction timed out after 0.1s; the messages stay pending (retried with the next turn). "
            "A slow model server needs a larger extraction_timeout_s (docs/models.md)",
            None,
        ),
        (
            RuntimeError("the provider is down"),
            "WARNING",
            "memory extraction failed; skipping the write",
            "RuntimeError",
        ),
        (None, "WARNING", "the memory extractor gave no answer; skipping the write", None),
        (
            {"notes": "not a list"},
            "WARNING",
            "memory extraction returned a malformed result; skipping the write",
            "ValidationError",
        ),
        ("a sentence", "WARNING", "memory extraction returned str; skipping the write", None),
    ],
    ids=["timeout", "error", "nothing", "malformed", "wrong_type"],
)
async def test_a_failed_extraction_writes_nothing_and_says_why(caplog, answer, level, message, traceback):
    caplog.set_level(logging.INFO, logger="mnemo.writing.extraction")
    found = await aextract(Extractor(answer), ["I live in Paris."], timeout_s=0.1)
    assert found is (TIMED_OUT if answer == "slow" else None)
    records = [r for r in caplog.records if r.name == "mnemo.writing.extraction"]
    # The traceback logged with it, by its exception's type.
    logged = [(r.levelname, r.getMessage(), r.exc_info[0].__name__ if r.exc_info else None) for r in records]
    assert logged == [(level, message, traceback)]


async def test_a_dict_answer_is_read_as_an_extraction():
    assert await aextract(Extractor({"notes": ["The user has a cat."]}), ["I have a cat."], timeout_s=5) == (
        MemoryExtraction(notes=["The user has a cat."])
    )


async def test_an_extraction_through_an_openai_compatible_server_takes_the_way_it_honours(stub):
    # The stub, like many servers, ignores response_format and answers structured output
    # only through tools: json_schema is tried first, once; the function call is kept.
    from langchain.chat_models import init_chat_model

    from mnemo.writing.extraction import build_extractor

    model = init_chat_model("openai:stub", base_url=stub.base_url, api_key="not-a-key", max_retries=0)
    for _ in range(2):
        found = await aextract(build_extractor(model), ["I live in Paris."], timeout_s=30)
        assert found == MemoryExtraction(city="Paris")
    asked = [
        (r.get("response_format", {}).get("type"), [t["function"]["name"] for t in r.get("tools", [])])
        for r in stub.requests
    ]
    assert asked == [("json_schema", []), (None, ["MemoryExtraction"]), (None, ["MemoryExtraction"])]
