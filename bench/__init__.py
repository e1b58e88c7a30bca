"""mnemo's benchmarks: memory recall on LoCoMo, per-turn cost, embedders, thresholds.

Run from the repository root (``bench`` is a development tool, not part of
the installed package)::

    python -m bench all --out bench/results            # everything but tune, < 15 min on 2 cores
    python -m bench all --out /tmp/b --smoke --quiet   # the quick check CI runs
    python -m bench locomo --data PATH --out DIR [--k 5,10,25] [--smoke]   # the headline table
    python -m bench tune --data PATH --out DIR [--smoke]   # ablations and setting grids, tune / held out
    python -m bench tune --only dated_notes --data PATH --out DIR   # one part of tune, into tune_<part>.json
    python -m bench turn-cost --out DIR [--smoke]
    python -m bench embedders --out DIR [--smoke]
    python -m bench thresholds --out DIR [--smoke]
    python -m bench sparse --out DIR [--smoke]         # the learned sparse ranking: probe ranks, cost
    python -m bench overhead --out DIR [--only memory|postgres] [--smoke]  # next to a bare agent and memory-agent
    python -m bench plots --out DIR                    # redraw the PNGs from the JSON
    python -m bench report --out DIR                   # the JSON as markdown tables

Modules:

* :mod:`bench.common` - instrumentation shared by the benchmarks: an
  embedding cache (so that one run embeds each text once), counting
  wrappers for the store and the embedder, the token counter, JSON output;
* :mod:`bench.locomo_data` - the LoCoMo loader (public split and the
  original ``locomo10.json`` share one layout);
* :mod:`bench.locomo` - recall@k of mnemo and of the alternatives;
* :mod:`bench.tune` - mnemo's ablations and the grids its settings are
  chosen with (tune conversations apart from held-out ones);
* :mod:`bench.turn_cost` - the compiled agent graph driven by a scripted
  chat model, measured per turn;
* :mod:`bench.embedders` - throughput and latency of the embedders that
  install offline;
* :mod:`bench.thresholds` - the measurements behind mnemo's similarity
  thresholds (dedupe: :mod:`bench.thresholds_dedupe`; recall's relevance rule
  replayed: :mod:`bench.thresholds_replay`);
* :mod:`bench.sparse` - the learned sparse ranking on the probe users, and
  its cost;
* :mod:`bench.overhead` and :mod:`bench.overhead_serve` - time to first token and CPU
  per turn through ``./scripts/dev``, next to :mod:`bench.bare_agent` and
  :mod:`bench.memory_agent` (LangChain's memory-agent template);
* :mod:`bench.plots` - PNG plots of the JSON results;
* :mod:`bench.report` - markdown tables of the JSON results (docs/bench.md).

Results and the exact commands are described in ``docs/bench.md``.
"""
