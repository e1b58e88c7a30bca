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

* :mod:`bench.common` - what the benchmarks share: where things are, an
  embedding cache (so that one run embeds each text once), the token
  counter, progress bars, each result's provenance and JSON output
  (:mod:`bench.provenance`: the machine, versions, the embedder's arithmetic);
* :mod:`bench.stats` - the percentiles of every result, in its shapes;
* :mod:`bench.locomo_data` - the LoCoMo loader (public split and the
  original ``locomo10.json`` share one layout);
* :mod:`bench.locomo` - recall@k of mnemo and of the alternatives (the
  turns written: :mod:`bench.locomo_write`; the questions asked:
  :mod:`bench.locomo_ask`; the arithmetic: :mod:`bench.locomo_tables`);
* :mod:`bench.tune` - mnemo's ablations and the grids its settings are
  chosen with (tune conversations apart from held-out ones; the statistics:
  :mod:`bench.tune_stats`; the attempts :mod:`bench.tune_dated`,
  :mod:`bench.tune_spread`, :mod:`bench.tune_entities`);
* :mod:`bench.turn_cost` - the compiled agent graph driven by a scripted
  chat model (:mod:`bench.turn_script`), measured per turn and per node
  (:mod:`bench.counting`: store round trips, embeddings, encoder CPU, wall time);
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
* :mod:`bench.real_model` and :mod:`bench.memory_quality` - mnemo through
  ``./scripts/dev`` against a real model server (:mod:`bench.llama_server`
  serves the local model of ``./scripts/dev``, :mod:`bench.model_probe` asks it directly,
  :mod:`bench.model_proxy` records what mnemo sends it);
* :mod:`bench.plots` - PNG plots of the JSON results;
* :mod:`bench.report` - markdown tables of the JSON results (docs/bench.md;
  :mod:`bench.report_locomo`, :mod:`bench.report_thresholds`, cells from
  :mod:`bench.tables`).

Results and the exact commands are described in ``docs/bench.md``.
"""
