"""``python -m fabric_engine``: see :mod:`fabric_engine.cli`."""

import sys

from .cli import main

sys.exit(main())
