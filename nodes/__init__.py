"""One module per step of the agent graph. Nodes stay thin: they resolve the
user, call :mod:`mnemo` and shape state; the memory model lives in ``mnemo``.

:mod:`nodes.context` (the run's ``Context`` and :func:`~nodes.context.current_user`),
:mod:`nodes.state` and the client's rule it applies (:mod:`nodes.client_writes`,
which the server applies too) sit below the steps and import only ``mnemo``;
:mod:`graphs` wires the steps.
"""
