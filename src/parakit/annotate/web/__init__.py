"""The annotation web app: :func:`create_app` (see :mod:`parakit.annotate.web.app`)."""

from parakit.annotate.web.app import create_app
from parakit.annotate.web.text import segments

__all__ = ["create_app", "segments"]
