"""``python -m mnemo``: the operator commands (mnemo.cli)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from mnemo import cli
from mnemo.access.tokens import verify_token
from mnemo.cli import command_line
from mnemo.core import Caller

SECRET = "c" * 40


def test_token_mints_what_the_server_verifies(monkeypatch, capsys):
    monkeypatch.setenv("MNEMO_JWT_SECRET", SECRET)
    assert cli.main(["token", "u_zhou"]) == 0
    assert verify_token(capsys.readouterr().out.strip(), secret=SECRET) == Caller("u_zhou", "user")
    assert cli.main(["token", "backend", "--admin", "--ttl", "30m"]) == 0
    assert verify_token(capsys.readouterr().out.strip(), secret=SECRET).admin


def test_without_any_secret_token_says_how_to_get_one(monkeypatch, tmp_path, capsys):
    monkeypatch.delenv("MNEMO_JWT_SECRET", raising=False)
    monkeypatch.chdir(tmp_path)  # no .env, no .mnemo/
    assert cli.main(["token", "u_zhou"]) == 2
    assert "./scripts/dev" in capsys.readouterr().err


def test_token_uses_the_dev_secret_once_it_exists(monkeypatch, tmp_path, capsys):
    monkeypatch.delenv("MNEMO_JWT_SECRET", raising=False)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["dev-secret"]) == 0
    secret = capsys.readouterr().out.strip()
    assert (tmp_path / ".mnemo" / "jwt-secret").exists()
    assert cli.main(["token", "u_zhou"]) == 0
    assert verify_token(capsys.readouterr().out.strip(), secret=secret).user_id == "u_zhou"


def test_the_secret_in_dotenv_is_the_servers(monkeypatch, tmp_path, capsys):
    monkeypatch.delenv("MNEMO_JWT_SECRET", raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text(f"MNEMO_JWT_SECRET={SECRET}\n")
    assert cli.main(["token", "u_zhou"]) == 0
    assert verify_token(capsys.readouterr().out.strip(), secret=SECRET).user_id == "u_zhou"


def test_a_command_is_one_decorated_function(monkeypatch, capsys):
    monkeypatch.setattr(command_line, "COMMANDS", dict(command_line.COMMANDS))

    @command_line.command("hello", "say hello", command_line.arg("name"))
    def hello(args) -> int:
        print("hello", args.name)
        return 0

    assert command_line.main(["hello", "zhou"]) == 0 and capsys.readouterr().out == "hello zhou\n"
    with pytest.raises(ValueError, match="twice"):
        command_line.command("hello", "again")(hello)


def test_bad_arguments_are_argparse_errors(capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["token", "u1", "--ttl", "soon"])
    assert exit_.value.code == 2 and "invalid ttl" in capsys.readouterr().err


def test_python_dash_m_mnemo_runs_the_cli():
    out = subprocess.run([sys.executable, "-m", "mnemo", "--help"], capture_output=True, text=True, check=True).stdout
    assert "token" in out
