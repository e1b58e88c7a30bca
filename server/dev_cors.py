"""The CORS configuration ``./scripts/dev`` runs with: the project's own
(``http.cors`` of the ``langgraph.json`` being served) plus the local
front-end origins the script names, so a page such as agent-chat-ui on
``http://localhost:3000`` can call the development server.

Development only: the shipped configs allow no origin, and nothing but
``./scripts/dev`` calls this. The script passes the result to the platform as
``CORS_CONFIG`` (which replaces ``http.cors`` as a whole, hence the merge);
a ``CORS_CONFIG`` the user set wins and this is not run.

Usage: ``python -m server.dev_cors ORIGINS [langgraph dev arguments...]``,
``ORIGINS`` separated by commas or spaces; prints the JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def dev_cors(config: dict[str, Any], origins: str) -> dict[str, Any]:
    """``config``'s ``http.cors`` with ``origins`` added to ``allow_origins``
    (in order, once each)."""
    cors = dict((config.get("http") or {}).get("cors") or {})
    added = [o.rstrip("/") for o in origins.replace(",", " ").split()]
    cors["allow_origins"] = list(dict.fromkeys([*cors.get("allow_origins", []), *added]))
    return cors


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m server.dev_cors", add_help=False)
    parser.add_argument("origins")
    parser.add_argument("--config", "-c", default="langgraph.json")
    args, _ = parser.parse_known_args(argv)  # the rest are langgraph dev's own
    try:
        cors = dev_cors(json.loads(Path(args.config).read_text("utf-8")), args.origins)
    except (OSError, ValueError) as exc:
        print(f"mnemo: no development CORS origins: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(cors))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
