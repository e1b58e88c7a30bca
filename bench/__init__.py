"""mnemo's benchmarks: memory recall on LoCoMo, overhead and load through ./scripts/dev, scale, real models.

Run from the repository root (``bench`` is a development tool, not part of
the installed package); ``docs/bench.md`` says what each measures, how to
run it and its latest results::

    python -m bench locomo --data PATH --out DIR [--k 5,10,25] [--smoke]   # the headline table
    python -m bench tune --data PATH --out DIR [--smoke]   # ablations and setting grids, tune / held out
    python -m bench overhead --out DIR [--only memory|postgres] [--smoke]  # next to a bare agent and memory-agent
    python -m bench load --out DIR [--smoke]           # N users at once against ./scripts/dev, with a SIGKILL
    python -m bench real-model --out DIR               # a real model server, on demand
    python -m bench memory-quality ...                 # what mnemo remembers with a model, on demand
    python -m bench serve-model [--port 8080]          # the local model server, kept running
    python -m bench.memory_scale | bench.many_users | bench.store_scale   # the scale benchmarks
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
  :mod:`bench.tune_stats`);
* :mod:`bench.overhead` and :mod:`bench.overhead_serve` - time to first token and CPU
  per turn through ``./scripts/dev``, next to :mod:`bench.bare_agent` and
  :mod:`bench.memory_agent` (LangChain's memory-agent template), driven by
  :mod:`bench.turn_script`'s scripted model;
* :mod:`bench.load` - many users at once against ``./scripts/dev``;
* :mod:`bench.memory_scale`, :mod:`bench.many_users`, :mod:`bench.store_scale` -
  one user's notes, many users, the store alone, at scale;
* :mod:`bench.real_model` and :mod:`bench.memory_quality` - mnemo through
  ``./scripts/dev`` against a real model server (:mod:`bench.llama_server`
  serves the local model of ``./scripts/dev``, :mod:`bench.model_probe` asks it directly,
  :mod:`bench.model_proxy` records what mnemo sends it);
* :mod:`bench.plots` - PNG plots of the JSON results;
* :mod:`bench.report` - markdown tables of the JSON results (docs/bench.md;
  :mod:`bench.report_locomo`, cells from :mod:`bench.tables`).
"""
