"""Graph wiring only: the steps live in ``nodes/``, the memory model in ``mnemo/``."""
