"""``python -m ccsim``: the same as the ``ccsim`` command."""

from .cli import main

raise SystemExit(main())
