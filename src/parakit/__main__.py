"""``python -m parakit`` runs the command line."""

import sys

from parakit.cli.app import main

sys.exit(main())
