"""mnemo.writing.extraction: what the extractor is shown, and a failed extraction
skipping the write (never the turn) with its reason logged."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from harness.scripted import unbounded
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


def test_every_string_and_list_of_the_extraction_schema_is_bounded():
    """A grammar-constrained server (llama.cpp, vLLM) cannot generate without end."""
    strings, lists, missing = unbounded(MemoryExtraction.model_json_schema())
    assert strings >= 10 and lists == 6  # the precondition: every field was seen
    assert missing == []


def test_an_answer_past_the_bounds_is_cut_to_them_not_refused():
    from mnemo.profile import MAX_FIELD_CHARS
    from mnemo.writing.extraction import MAX_DATED, MAX_ID_CHARS, MAX_NOTE_TEXT, MAX_NOTES

    long = "The user repeats " * 100
    found = MemoryExtraction.model_validate(
        {
            "city": "x" * 5000,
            "notes": [long] * 50,
            "dated_notes": [{"text": long, "refers_to": "2026-01-01" * 10}] * 9,
            "invalidates": ["y" * 100],
        }
    )
    assert found.profile_changes()["city"] == "x" * MAX_FIELD_CHARS
    assert found.notes == [long[:MAX_NOTE_TEXT]] * MAX_NOTES
    assert len(found.dated_notes) == MAX_DATED and found.dated_notes[0].text == long[:MAX_NOTE_TEXT]
    assert found.invalidates == ["y" * MAX_ID_CHARS]


def test_the_profile_fields_of_the_schema_are_the_profiles_own():
    from mnemo.profile import FIELD_MAX_CHARS, FIELD_PROMPTS, MAX_FIELD_CHARS, PROFILE_FIELDS
    from mnemo.profile.record import RESPONSE_STYLES

    properties = MemoryExtraction.model_json_schema()["properties"]
    assert list(properties)[: len(PROFILE_FIELDS)] == list(PROFILE_FIELDS)
    assert {f: properties[f]["description"] for f in PROFILE_FIELDS} == FIELD_PROMPTS
    style = next(a for a in properties["response_style"]["anyOf"] if a.get("type") == "string")
    assert tuple(style["enum"]) == RESPONSE_STYLES
    limits = {f: a["maxLength"] for f in PROFILE_FIELDS for a in properties[f]["anyOf"] if "maxLength" in a}
    assert limits == {f: FIELD_MAX_CHARS.get(f, MAX_FIELD_CHARS) for f in PROFILE_FIELDS if f != "response_style"}
    assert limits["language"] == 35 and limits["city"] == MAX_FIELD_CHARS  # the profile's own per-field limit


def test_the_prompt_says_what_each_profile_field_means_in_english_and_chinese():
    """Where the server enforces the schema as a grammar (llama.cpp), the model never
    reads the schema's descriptions: the instructions carry them."""
    import re

    from mnemo.profile import FIELD_PROMPTS, PROFILE_FIELDS
    from mnemo.writing.extraction import extraction_messages

    prompt = extraction_messages(["hi"], [])[0].content
    for field in PROFILE_FIELDS:
        assert f'"{field}": {FIELD_PROMPTS[field]}' in prompt
        assert re.search(r"[\u4e00-\u9fff]", FIELD_PROMPTS[field]), field  # in both languages
    assert "{fields}" not in prompt and "{today}" not in prompt and "{language}" not in prompt


@pytest.mark.parametrize(
    ("texts", "language"),
    [
        (["我三月二十号之前都在日本出差，这段时间请先别给我发货。"], "zh"),
        (["Hi, I'm Wen.", "请记住我对花生过敏，订单 A-20391。"], "zh"),  # the Chinese outweighs a few Latin words
        (["I live in Gdansk myself."], "en"),
        (["Sorry, I misspoke: not Austin, Boston.", "我住在 Boston。"], "en"),  # the English outweighs
        (["私は東京に住んでいます。"], "ja"),
        (["東京都港区在住の会社員です。"], "ja"),  # kanji outnumber kana (10 to 3): still Japanese
        (["東京都港区在住、職業エンジニア。"], "ja"),  # katakana only, kanji 9 to 5
        (["저는 서울에 살아요."], "ko"),
        (["Mieszkam w Gdańsku i mam kota."], None),  # Latin letters, not English: "i" is Polish's "and"
        (["Ich wohne in Berlin, mein Name ist Hans."], None),
        (["Hi"], None),
        (["880312？"], None),  # no word at all
    ],
)
def test_the_notes_are_asked_in_the_language_the_user_writes(texts, language):
    """A Chinese fact written in English is not the user's words and is dropped
    (issue 42): the instructions, and only they, name the user's language."""
    from mnemo.writing.extraction import NOTES_LANGUAGE, extraction_messages, writing_language

    assert writing_language(texts) == language
    system, data = extraction_messages(texts, [])
    assert system.content.endswith("\n" + NOTES_LANGUAGE[language])  # said last
    named = {"zh": "Chinese", "ja": "Japanese", "ko": "Korean", "en": "English"}
    for code, name in named.items():
        assert (f"The user writes {name}: write every note in {name}" in system.content) == (code == language)
    for text in texts:  # the user's words stay in the data part
        assert text not in system.content and text in data.content


def test_no_example_of_the_prompt_is_a_fact_of_a_user_who_shares_one_word_with_it():
    """A small model copies its prompt's examples ("I moved to Suzhou last March" was stored, issue 42):
    as a note, none is supported by a user's message that shares one of its words."""
    import re

    from mnemo.core import content_tokens
    from mnemo.writing.extraction import EXTRACTION_PROMPT
    from mnemo.writing.grounding import said_words, supported

    examples = [e for e in re.findall(r'"([^"]+)"', EXTRACTION_PROMPT) if len(content_tokens(e)) >= 3]
    assert "I started a new job last March" in examples and len(examples) >= 4
    for example in examples:
        for word in content_tokens(example):
            assert not supported(example, said_words([f"Well, {word}."])), (example, word)


def test_the_example_notes_are_the_prompt_s_and_a_copy_is_known_however_written():
    import re

    from mnemo.writing.extraction import EXAMPLE_NOTES, EXTRACTION_PROMPT, copies_an_example

    given = re.findall(r'gives\s+notes \["([^"]+)"\]|"text": "([^"]+)"', EXTRACTION_PROMPT)
    assert {a or b for a, b in given} == EXAMPLE_NOTES and len(EXAMPLE_NOTES) == 4
    assert copies_an_example("the user wants couriers to ring the  doorbell twice")
    assert copies_an_example("用户希望用邮件联系")
    assert not copies_an_example("用户希望用短信联系。")
