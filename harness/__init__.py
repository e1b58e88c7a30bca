"""What the tests and the benchmarks run mnemo with (never imported by the product).

* :mod:`harness.devserver` - a copy of the project served by ``./scripts/dev``
  on a free port, as a user runs it; tokens and SDK clients that sign in to it;
* :mod:`harness.stub_openai` - a local OpenAI-compatible chat server, with the
  measured behaviour of the servers users run;
* :mod:`harness.scripted` - a chat model whose answers a function of the
  messages scripts;
* :mod:`harness.store_backends` - the store backends the conformance suite
  runs on, each built as in use, and when PostgreSQL is skipped.

Not installed with mnemo (``pyproject.toml`` packages ``mnemo`` alone): it is
imported from the project directory, the current directory of ``./scripts/test``,
``.ci/run`` and ``python -m bench``. ``tests/project/test_import_layers.py``
holds that bench imports it and nothing from ``tests/``, and that the product
never imports it.
"""
