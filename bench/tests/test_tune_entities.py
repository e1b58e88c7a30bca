"""The attempt of ``python -m bench tune --only entities`` (bench.tune_entities):
how entities link notes, the hop's ranking and the ceiling (its run: test_bench.py)."""

from __future__ import annotations

from bench.locomo_ask import QuestionResult
from bench.tune_entities import ENTITY_GRID, EntityLinks, entity_names, entity_tables, hop, normalise, oracle

#: Twelve notes: "ana" is named by four (over a cap of 0.3), the others by two or one.
NAMED = {
    "n0": frozenset({"ana", "luna"}),
    "n1": frozenset({"ana"}),
    "n2": frozenset({"luna", "berlin"}),
    "n3": frozenset({"berlin"}),
    "n4": frozenset({"ana", "kyoto"}),
    "n5": frozenset({"ana"}),
    "n6": frozenset(),
    "n7": frozenset(),
    "n8": frozenset({"kyoto"}),
    "n9": frozenset({"paris"}),
    "n10": frozenset(),
    "n11": frozenset(),
}


def test_an_entity_links_as_a_name_case_and_possessive_aside():
    assert normalise("The  Boy Scouts") == "boy scouts"
    assert normalise("Charlotte's") == normalise("charlotte’s") == "charlotte"
    assert normalise("Yosemite.") == "yosemite"
    pairs = [("Charlotte's Web", "WORK_OF_ART"), ("last summer", "DATE"), ("two", "CARDINAL"), ("The Scouts", "ORG")]
    assert entity_names(pairs) == {"charlotte's web", "scouts"}  # dates and counts link nothing
    assert entity_names([("'s", "PERSON")]) == frozenset()  # nothing left: no name


def test_only_rare_entities_link_rarest_shared_first_ties_in_the_given_order():
    links = EntityLinks(NAMED, max_share=0.3)
    assert links.rare({"ana", "luna", "kyoto", "rome"}) == {"luna", "kyoto"}  # ana: 4 of 12; rome: nobody
    assert links.linked({"ana"}, order=list(NAMED)) == []
    # luna and berlin are both named twice; n2 shares both, so it comes first; n0 / n3 tie, in the order given
    assert links.linked({"luna", "berlin"}, order=["n3", "n0", "n2"]) == ["n2", "n3", "n0"]
    assert links.linked({"luna", "berlin"}, order=["n0", "n3"]) == ["n2", "n0", "n3"]  # n2 unranked: still first
    # one shared entity each: the rarer (paris, one note) first
    assert links.linked({"kyoto", "paris"}, order=["n8", "n4", "n9"]) == ["n9", "n8", "n4"]


def test_the_hop_follows_the_seeds_of_its_setting_and_none_is_recall_as_it_ships():
    links = EntityLinks(NAMED, max_share=0.3)
    ids = ["n3", "n6", "n7", "n9", "n1", "n5", "n4", "n8", "n0", "n2"]
    assert ENTITY_GRID[0] == ("none", 0, 0.0) and hop(ids, links, frozenset({"luna"}), ENTITY_GRID[0]) == ids
    # the best hit n3 names berlin: n2 (berlin) moves up, the rest keeps its order
    after_hits = hop(ids, links, frozenset(), ("hits", 1, 0.5))
    assert after_hits.index("n2") < ids.index("n2") and sorted(after_hits) == sorted(ids)
    # the question names kyoto: n8 and n4 move up; the hits' seeds are not followed
    after_question = hop(ids, links, frozenset({"kyoto"}), ("question", 0, 0.5))
    assert after_question.index("n4") < ids.index("n4") and after_question.index("n8") < ids.index("n8")
    assert after_question.index("n2") == ids.index("n2") + 0  # berlin is no seed here
    both = hop(ids, links, frozenset({"kyoto"}), ("both", 1, 0.5))
    assert both.index("n2") < ids.index("n2") and both.index("n8") < ids.index("n8")
    assert hop(ids, links, frozenset({"ana"}), ("question", 0, 0.5)) == ids  # nothing rare: unchanged


def test_the_ceiling_puts_evidence_linked_to_found_evidence_first():
    links = EntityLinks(NAMED, max_share=0.3)
    covers = {nid: frozenset({f"D{nid[1:]}"}) for nid in NAMED}
    ids = ["n6", "n7", "n3", "n9", "n1", "n5", "n4", "n10", "n11", "n0", "n8", "n2"]
    # in the top 10, n3 and n6 are evidence; n3 names berlin, which n2 (evidence, 12th) names too;
    ranked = oracle(ids, frozenset({"D3", "D2", "D6"}), covers, links)
    assert ranked[:3] == ["n6", "n3", "n2"] and sorted(ranked) == sorted(ids)
    assert ranked[3:] == [n for n in ids if n not in {"n6", "n3", "n2"}]
    # n8 (11th) shares kyoto with the evidence n4 but is no evidence: not moved
    assert oracle(ids, frozenset({"D4"}), covers, links) == ["n4", *[n for n in ids if n != "n4"]]
    # evidence linked to no evidence of the top 10 is not moved (n6 names nothing)
    assert oracle(ids, frozenset({"D6", "D2"}), covers, links)[:2] == ["n6", "n7"]


def test_without_spacy_the_part_says_so_and_ranks_nothing():
    result = QuestionResult(category="1", evidence=frozenset({"D1:1"}), sessions=frozenset({1}))
    assert entity_tables([result], [5, 10]) == {
        "entities": {"installed": False, "requirements": "bench/requirements-entities.txt"}
    }
