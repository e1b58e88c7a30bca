"""``python -m mnemo``: see :mod:`mnemo.cli`."""

from mnemo.cli import main

raise SystemExit(main())
