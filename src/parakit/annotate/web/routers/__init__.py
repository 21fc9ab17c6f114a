"""The app's routers: ``auth`` (login/logout), ``pages`` (annotator pages), ``api`` (annotator
JSON actions), ``admin`` (admin and adjudicator pages and actions)."""
