"""Loading LoCoMo (Maharana et al., ACL 2024) for retrieval benchmarks.

Reads the layout of the original ``data/locomo10.json``, which the public
split in ``../shared/data/locomo/`` shares: a list of conversations, each

    {"sample_id": "conv-26",
     "conversation": {"speaker_a": ..., "speaker_b": ...,
                      "session_1_date_time": "1:56 pm on 8 May, 2023",
                      "session_1": [{"speaker", "dia_id": "D1:3", "text",
                                     optional "img_url", "blip_caption", "query"}, ...],
                      ...},
     "qa": [{"question", "answer" | "adversarial_answer", "evidence": ["D1:3", ...],
             "category": 1..5}, ...],
     ...}

A single conversation object, or ``{"data": [...]}``, is accepted too.

Evidence ids are parsed leniently, because a few are malformed in the
released file ("D8:6; D9:17" holds two ids, "D:11:26" has a stray colon);
an id that still matches no turn is counted as *unmatched* and reported, not
silently dropped.

The data is only ever read from where it lies; nothing of it is written into
the repository (the JSON results hold counts and scores only).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

#: LoCoMo's own category ids.
CATEGORY_NAMES = {"1": "multi-hop", "2": "temporal", "3": "open-domain", "4": "single-hop", "5": "adversarial"}
#: Categories averaged into "overall" (5, adversarial, is reported apart:
#: its questions are unanswerable by design).
MAIN_CATEGORIES = ("1", "2", "3", "4")
ALL_CATEGORIES = ("1", "2", "3", "4", "5")
#: Settings may be chosen looking at these conversations of the public split
#: (the first two); every other conversation is reported as held out
#: (``split`` in the JSON): a reader sees what is fit and what generalises.
TUNE_CONVERSATIONS = ("conv-26", "conv-30")

_SESSION_KEY = re.compile(r"session_(\d+)$")
_EVIDENCE = re.compile(r"D:?(\d+):(\d+)")


@dataclass(frozen=True)
class Turn:
    dia_id: str
    """Canonical id ``D<session>:<turn>``."""
    session: int
    speaker: str
    text: str
    """The note text: ``"{speaker}: {text}"`` plus the image caption, if any."""


@dataclass
class Question:
    question: str
    category: str
    evidence: list[str]
    """Evidence ids that match a turn of the conversation (canonical form)."""
    unmatched: list[str] = field(default_factory=list)
    """Evidence ids (or fragments) that match no turn."""

    @property
    def sessions(self) -> set[int]:
        return {session_of(d) for d in self.evidence}


@dataclass
class Conversation:
    sample_id: str
    turns: list[Turn]
    questions: list[Question]
    session_dates: dict[int, str] = field(default_factory=dict)


def canonical(dia_id: str) -> str | None:
    """``"D1:3"`` for ``"D1:3"``, ``"D:1:3"`` or ``"D01:03"``; None if unparseable."""
    m = _EVIDENCE.fullmatch(dia_id.strip())
    return f"D{int(m.group(1))}:{int(m.group(2))}" if m else None


def session_of(dia_id: str) -> int:
    return int(dia_id[1:].split(":")[0])


#: How a dialog turn is written as a note (``--note-format``):
#:
#: ``colon``  ``Caroline: I went to the support group. [shares an image: ...]``
#:            (the default; the layout of the earlier embedder measurements)
#: ``said``   ``Caroline said, "I went to the support group." and shared ...``
#:            (the LoCoMo paper's own rendering of a turn)
#:
#: Every method sees the same texts, so the comparison between methods holds
#: for either; the absolute recall of a dense embedder does not (see
#: docs/bench.md: multilingual-e5-small ranks "Name: text" lines much worse).
NOTE_FORMATS = ("colon", "said")


def _clean(value: object) -> str:
    """A field as text a store accepts: NUL characters and unpaired
    surrogates (which no backend stores) dropped, white space collapsed."""
    text = value if isinstance(value, str) else "" if value is None else str(value)
    text = text.replace("\x00", "").encode("utf-8", "replace").decode("utf-8")
    return " ".join(text.split())


def turn_text(turn: dict, note_format: str = "colon") -> str:
    """What gets stored for one dialog turn: who said it, what, and what
    picture they shared (the BLIP caption stands in for the image). A turn
    with neither text nor caption (an image without one) still gets a note,
    so that its id stays a valid evidence target."""
    speaker = _clean(turn.get("speaker")) or "?"
    said = _clean(turn.get("text"))
    caption = _clean(turn.get("blip_caption"))
    if not said and not caption:
        said = "[shares an image]" if turn.get("img_url") else "[says nothing]"
    if note_format == "said":
        return f'{speaker} said, "{said}"' + (f" and shared {caption}." if caption else "")
    if note_format != "colon":
        raise ValueError(f"note format must be one of {NOTE_FORMATS}, got {note_format!r}")
    return f"{speaker}: {said}" + (f" [shares an image: {caption}]" if caption else "")


def parse_evidence(raw: object, known: set[str]) -> tuple[list[str], list[str]]:
    matched: list[str] = []
    unmatched: list[str] = []
    items = [raw] if isinstance(raw, str) else raw if isinstance(raw, list) else []
    for item in items:
        parts = [p for p in re.split(r"[;,\s]+", str(item)) if p]
        if not parts:
            unmatched.append(str(item))
        for part in parts:
            dia = canonical(part)
            if dia is not None and dia in known:
                if dia not in matched:
                    matched.append(dia)
            else:
                unmatched.append(part)
    return matched, unmatched


def _conversation(obj: dict, index: int, note_format: str) -> Conversation:
    conv = obj.get("conversation") or {}
    sessions = sorted(
        (int(m.group(1)), value)
        for key, value in conv.items()
        if (m := _SESSION_KEY.fullmatch(key)) and isinstance(value, list)
    )
    turns: list[Turn] = []
    seen: set[str] = set()
    for number, session in sessions:
        for i, raw in enumerate(session, start=1):
            if not isinstance(raw, dict):
                continue
            dia = canonical(str(raw.get("dia_id", ""))) or f"D{number}:{i}"
            if dia in seen:  # never two turns under one id
                continue
            seen.add(dia)
            turns.append(
                Turn(
                    dia_id=dia,
                    session=number,
                    speaker=_clean(raw.get("speaker")) or "?",
                    text=turn_text(raw, note_format),
                )
            )
    questions = []
    for qa in obj.get("qa") or []:
        if not isinstance(qa, dict) or not _clean(qa.get("question")):
            continue  # nothing to ask
        evidence, unmatched = parse_evidence(qa.get("evidence"), seen)
        questions.append(
            Question(
                question=_clean(qa.get("question")),
                category=str(qa.get("category", "")),
                evidence=evidence,
                unmatched=unmatched,
            )
        )
    dates = {n: str(conv.get(f"session_{n}_date_time", "")) for n, _ in sessions}
    return Conversation(
        sample_id=str(obj.get("sample_id") or f"conv-{index}"), turns=turns, questions=questions, session_dates=dates
    )


def load_locomo(path: str | Path, *, note_format: str = "colon") -> list[Conversation]:
    """All conversations of a LoCoMo-layout JSON file."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if isinstance(data, dict):
        data = data.get("data", [data])
    if not isinstance(data, list) or not data:
        raise ValueError(f"{path}: expected a list of LoCoMo conversations")
    return [_conversation(obj, i, note_format) for i, obj in enumerate(data)]


def truncate(conv: Conversation, *, sessions: int, questions: int) -> Conversation:
    """A small slice for ``--smoke``: the first ``sessions`` sessions and up to
    ``questions`` questions whose evidence lies entirely inside them (so the
    recall numbers of the slice still mean something). Questions without any
    matching evidence id are kept too: they are counted, not evaluated."""
    keep = {s for s in sorted({t.session for t in conv.turns})[:sessions]}
    turns = [t for t in conv.turns if t.session in keep]
    ids = {t.dia_id for t in turns}
    picked = [q for q in conv.questions if set(q.evidence) <= ids][:questions]
    return Conversation(conv.sample_id, turns, picked, {k: v for k, v in conv.session_dates.items() if k in keep})
