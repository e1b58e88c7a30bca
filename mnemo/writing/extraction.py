"""Turning what the user said into memory updates, with structured output.

Only the user's messages reach the extractor. :func:`aextract` never raises: a failure
returns ``None`` (skip the write), nothing found is an empty :class:`MemoryExtraction`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel, Field

from mnemo.kinds import PROFILE_FIELDS, ProfileField, ResponseStyle
from mnemo.notes import now

logger = logging.getLogger(__name__)

EXTRACTION_PROMPT = """You maintain long-term memory about ONE user of a customer-service assistant.
Below are messages the USER wrote in this conversation (assistant messages are deliberately not shown).
Extract only what the user stated about themselves, in their own words' meaning:
- Fill a profile field only if the user clearly stated it. Otherwise leave it null. Never guess.
- "forget_fields": fields the user explicitly asked you to forget or delete, or said are no longer true without giving a new value.
- "notes": durable personal facts or preferences worth remembering in future conversations
  (e.g. allergies, devices they own, family, recurring needs), one short self-contained sentence each,
  written in the user's language, in third person ("The user ..." / "用户……").
  Do NOT include: the profile fields above, questions, greetings, one-off requests, order numbers or
  anything about orders/refunds/payments (the order system is authoritative for those).
- "temporary_notes": facts that are only true for a while ("I'm travelling until Friday"), each with
  "expires": the ISO date (or date and time) when it stops being true. Today is {today} (UTC).
- "dated_notes": durable facts about something that happened or will happen at a known time
  ("I moved to Suzhou last March", "my wedding is on 12 June"), each with "refers_to": that date as
  YYYY-MM-DD, YYYY-MM or YYYY, worked out from today's date. Put such a fact here, not in "notes".
If nothing qualifies, return all fields null and empty lists.

USER MESSAGES:
{messages}"""


class TemporaryNote(BaseModel):
    """A fact about the user that stops being true at a known time."""

    text: str = Field(description="The fact, one short self-contained sentence in third person.")
    expires: str = Field(description="ISO date (YYYY-MM-DD) or datetime when it stops being true.")


class DatedNote(BaseModel):
    """A durable fact about something at a known time."""

    text: str = Field(description="The fact, one short self-contained sentence in third person.")
    refers_to: str = Field(description="The date it is about: YYYY-MM-DD, YYYY-MM or YYYY.")


class MemoryExtraction(BaseModel):
    """Memory updates stated by the user in this conversation turn."""

    name: str | None = Field(default=None, description="The user's name, only if the user said it.")
    city: str | None = Field(default=None, description="City where the user lives, only if the user said it.")
    language: str | None = Field(
        default=None,
        description="Language the user wants answers in, e.g. 'zh' or 'en', only if stated or obvious from a request.",
    )
    response_style: ResponseStyle | None = Field(
        default=None,
        description="How the user wants answers: 'concise' (short, no fluff) or 'detailed'. Only if the user asked.",
    )
    forget_fields: list[ProfileField] = Field(
        default_factory=list, description="Profile fields the user asked to forget."
    )
    notes: list[str] = Field(default_factory=list, description="Durable facts the user stated about themselves.")
    temporary_notes: list[TemporaryNote] = Field(
        default_factory=list, description="Facts the user stated that are only true until a known date."
    )
    dated_notes: list[DatedNote] = Field(
        default_factory=list, description="Durable facts the user stated about something at a known date."
    )

    # One field above per name in mnemo.kinds.profile.PROFILE_FIELDS (tests/test_profile.py checks it).

    def profile_changes(self) -> dict[str, str | None]:
        """Profile field -> the value stated (``None``: not mentioned)."""
        return {field: getattr(self, field) for field in PROFILE_FIELDS}


def build_extractor(model: BaseChatModel) -> Any:
    """Structured-output runnable for :class:`MemoryExtraction` (function calling)."""
    return model.with_structured_output(MemoryExtraction, method="function_calling")


async def aextract(extractor: Any, user_messages: Sequence[str], *, timeout_s: float) -> MemoryExtraction | None:
    """Run the extractor on the user's messages; ``None`` means "write nothing".

    Never raises: memory is a side effect and must not fail the turn.
    """
    texts = [t.strip() for t in user_messages if t and t.strip()]
    if not texts:
        return None
    prompt = EXTRACTION_PROMPT.format(messages="\n".join(f"- {t}" for t in texts), today=now().date().isoformat())
    try:
        result = await asyncio.wait_for(extractor.ainvoke(prompt), timeout=timeout_s)
    except TimeoutError:
        logger.warning("memory extraction timed out after %.1fs; skipping the write", timeout_s)
        return None
    except Exception:
        logger.warning("memory extraction failed; skipping the write", exc_info=True)
        return None
    if result is None:
        logger.info("memory extraction returned nothing; skipping the write")
        return None
    if isinstance(result, dict):
        try:
            result = MemoryExtraction.model_validate(result)
        except Exception:
            logger.warning("memory extraction returned a malformed result; skipping the write", exc_info=True)
            return None
    if not isinstance(result, MemoryExtraction):
        logger.warning("memory extraction returned %s; skipping the write", type(result).__name__)
        return None
    return result
