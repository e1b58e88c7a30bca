"""Bounds a structured answer's schema carries, so a grammar-constrained
server cannot generate without end (``maxLength`` on strings, ``maxItems`` on
lists), and that validation applies by cutting, never by refusing the answer.

llama.cpp's server (``common/json-schema.cpp``) and vLLM (xgrammar, outlines)
turn both keywords into the generation grammar; OpenAI's non-strict
``json_schema`` and function calling, which mnemo sends, take them as guidance
(docs/models.md). A model that repeats itself inside the grammar then stops at
the bound instead of at the output cap, and the answer parses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import core_schema


@dataclass(frozen=True)
class Bound:
    """``Annotated`` metadata: the schema says at most ``limit`` (characters of a
    string, items of a list); a longer value is cut to it (``cut=False``: left
    for the caller's own check to refuse)."""

    limit: int
    cut: bool = True

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        schema = handler(source)
        if not self.cut:
            return schema
        return core_schema.no_info_before_validator_function(self._cut, schema)

    def __get_pydantic_json_schema__(
        self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        shown = handler(schema)
        target = handler.resolve_ref_schema(shown)
        target["maxItems" if target.get("type") == "array" else "maxLength"] = self.limit
        return shown

    def _cut(self, value: Any) -> Any:
        return value[: self.limit] if isinstance(value, str | list) else value
