"""One module per step of the agent graph. Nodes stay thin: they resolve the
user, call :mod:`mnemo` and shape state; the memory model lives in ``mnemo``."""
