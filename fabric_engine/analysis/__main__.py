"""``python -m fabric_engine.analysis ebb ...``."""

import sys

from .cli import main

sys.exit(main())
