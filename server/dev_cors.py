"""The CORS configuration ``./scripts/dev`` runs with (development only): the
served config's ``http.cors`` plus the local front-end origins the script names
and those of ``MNEMO_DEV_CORS_ORIGINS``; nothing when the user set
``CORS_CONFIG`` (it wins). ``python -m server.dev_cors ORIGINS [langgraph dev
args]`` prints the JSON the script exports as ``CORS_CONFIG``. Why: docs/clients.md.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from mnemo.app import env

#: Further origins the developer allows (environment or ``.env``), comma-separated.
EXTRA_ENV = "MNEMO_DEV_CORS_ORIGINS"


def dev_cors(config: dict[str, Any], origins: str) -> dict[str, Any]:
    """``config``'s ``http.cors`` with ``origins`` added to ``allow_origins``
    (in order, once each)."""
    cors = dict((config.get("http") or {}).get("cors") or {})
    added = [o.rstrip("/") for o in origins.replace(",", " ").split()]
    cors["allow_origins"] = list(dict.fromkeys([*cors.get("allow_origins", []), *added]))
    return cors


def _setting(name: str, config: dict[str, Any], config_path: Path) -> str:
    """``name`` from the environment, else from the config's env file, as
    ``langgraph dev`` will see it (it loads that file with python-dotenv)."""
    if value := env.raw(name):
        return value
    env_file = config.get("env")
    if not isinstance(env_file, str):
        return ""
    from dotenv import dotenv_values  # installed with langgraph-cli

    return dotenv_values(config_path.parent / env_file).get(name) or ""


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m server.dev_cors", add_help=False)
    parser.add_argument("origins")
    parser.add_argument("--config", "-c", default="langgraph.json")
    args, _ = parser.parse_known_args(argv)  # the rest are langgraph dev's own
    path = Path(args.config)
    try:
        config = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        print(f"mnemo: no development CORS origins: {exc}", file=sys.stderr)
        return 1
    if _setting("CORS_CONFIG", config, path):
        return 0  # the user's configuration, as a deployment's
    cors = dev_cors(config, f"{args.origins},{_setting(EXTRA_ENV, config, path)}")
    print(
        f"mnemo: web pages from {', '.join(cors['allow_origins'])} may call the API "
        f"(development CORS; add origins with {EXTRA_ENV})",
        file=sys.stderr,
    )
    print(json.dumps(cors))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
