"""prefbuild: build preference (DPO) datasets for LLM agents."""

__version__ = "0.1.0"
