"""``python -m mnemo remember | set-profile | search | import`` (mnemo/cli/app_memory_commands.py)
on an in-memory store standing for PostgreSQL; with ``--url`` through
``./scripts/dev``: tests/e2e/test_app_memory.py."""

from __future__ import annotations

import asyncio
import json
from contextlib import asynccontextmanager

import pytest

from mnemo import User, aget_profile
from mnemo.audit.chain import alist_audit
from mnemo.cli import main
from mnemo.notes import alist_notes

ALICE = User.of("alice")


@pytest.fixture
def local(monkeypatch, store):
    import mnemo.cli.memory_commands

    @asynccontextmanager
    async def in_memory():
        yield store

    monkeypatch.setattr(mnemo.cli.memory_commands, "open_local_store", in_memory)
    monkeypatch.delenv("MNEMO_URL", raising=False)
    return store


def test_remember_set_profile_and_search_write_as_an_application_and_explain(local, capsys):
    assert main(["remember", "alice", "Has a dog called Max.", "--refers-to", "2024-03", "--url", ""]) == 0
    note = json.loads(capsys.readouterr().out)
    assert note["status"] == "stored" and note["note"]["source"] == "app" and note["note"]["refers_to"] == "2024-03"
    assert main(["set-profile", "alice", "city=Hangzhou", "language=English", "--url", ""]) == 0
    assert json.loads(capsys.readouterr().out)["profile"]["language"]["value"] == "en"
    assert main(["set-profile", "alice", "language=", "--url", ""]) == 0  # FIELD= deletes it
    capsys.readouterr()
    profile = asyncio.run(aget_profile(local, ALICE))
    assert {f: (e["value"], e["source"]) for f, e in profile.items()} == {"city": ("Hangzhou", "app")}
    records = asyncio.run(alist_audit(local, ALICE))
    assert {r["route"] for r in records} == {"python -m mnemo remember", "python -m mnemo set-profile"}
    assert all(r["source"] == "admin" and r["actor"].startswith("cli:") for r in records)

    assert main(["search", "alice", "What is my dog called?", "--url", ""]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("relevant ") and "meaning #1" in lines[0] and lines[0].endswith("Has a dog called Max.")
    assert lines[-1].startswith("memory block: ")
    assert main(["search", "alice", "dog", "--json", "--url", ""]) == 0
    assert json.loads(capsys.readouterr().out)["profile"]["city"]["value"] == "Hangzhou"


def test_bad_input_is_an_error_naming_it_and_nothing_is_written(local, capsys):
    assert main(["remember", "alice", "Is away.", "--expires-at", "2001-01-01", "--url", ""]) == 2
    assert "already past" in capsys.readouterr().err
    assert main(["set-profile", "alice", "shoe=42", "--url", ""]) == 2
    assert "unknown profile field 'shoe'" in capsys.readouterr().err
    assert main(["set-profile", "alice", "city", "--url", ""]) == 2
    assert main(["search", "alice", "x" * 9000, "--url", ""]) == 2
    assert asyncio.run(alist_notes(local, ALICE)) == [] and asyncio.run(alist_audit(local, ALICE)) == []


def test_export_then_import_into_another_user_and_again(local, capsys, tmp_path):
    main(["remember", "alice", "Has a dog called Max.", "--url", ""])
    main(["set-profile", "alice", "city=Hangzhou", "--url", ""])
    capsys.readouterr()
    assert main(["export", "alice", "--out", str(tmp_path / "a.json"), "--url", ""]) == 0
    assert main(["import", "bob", str(tmp_path / "a.json"), "--dry-run", "--url", ""]) == 0
    assert json.loads(capsys.readouterr().out)["written"] == {"notes": 1, "profile": 1}
    assert asyncio.run(alist_notes(local, User.of("bob"))) == []
    assert main(["import", "bob", str(tmp_path / "a.json"), "--url", ""]) == 0
    capsys.readouterr()
    assert [n["text"] for n in asyncio.run(alist_notes(local, User.of("bob")))] == ["Has a dog called Max."]
    assert main(["import", "bob", str(tmp_path / "a.json"), "--url", ""]) == 0
    assert json.loads(capsys.readouterr().out)["written"] == {}
    (tmp_path / "bad.json").write_text("{nope")
    assert main(["import", "bob", str(tmp_path / "bad.json"), "--url", ""]) == 2
    assert "cannot read" in capsys.readouterr().err
