"""``python -m parakit`` runs the command line."""

import sys

from parakit.cli import main

sys.exit(main())
