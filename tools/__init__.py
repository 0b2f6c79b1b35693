"""The course's tooling: notebook execution, the offline website, one-language editions, lecture decks
and text checks. Each tool runs as ``python tools/NAME.py ...`` or ``python -m tools.NAME ...``."""
