"""Fixture: a Hub-compatible HTTP server on 127.0.0.1 (filled in by the publish work)."""
