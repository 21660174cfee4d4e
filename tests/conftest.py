"""Suite-wide setup. Hub settings must be in the environment before huggingface_hub is imported."""

import os

os.environ.setdefault("HF_HUB_DISABLE_XET", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "0")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

pytest_plugins = [
    "tests.plugins.fault_server",
    "tests.plugins.hub_server",
    "tests.plugins.vllm_server",
]
