"""``python -m memkit``: the command line (see :mod:`memkit.cli`)."""

import sys

from .cli import main

sys.exit(main())
