"""What the server mounts besides its API (``langgraph.json`` → ``http.app``,
:mod:`web.app`): the console, the ``/memory`` routes and ``/feedback``."""
