"""Opt-in: publish to the real Hugging Face Hub. Runs only with PREFBUILD_REAL_HUB_TOKEN set.

The test session points huggingface_hub at the loopback Hub when it is imported, so the real
push runs in a child process with the real endpoint and the given token; a private throw-away
repo is created and deleted again.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

from prefbuild.exports.dataset_dir import write_dataset_dir
from prefbuild.hub.card import CardInfo
from tests.publish.factories import make_pairs, trl_rows

TOKEN = os.environ.get("PREFBUILD_REAL_HUB_TOKEN")

CHILD = textwrap.dedent("""
    import sys
    from huggingface_hub import HfApi
    import datasets
    from prefbuild.hub.publish import publish_dataset_dir

    dataset_dir, name = sys.argv[1], sys.argv[2]
    api = HfApi()
    repo_id = f"{api.whoami()['name']}/{name}"
    try:
        publish_dataset_dir(dataset_dir, repo_id, private=True)
        local = datasets.load_dataset(dataset_dir, "trl")
        remote = datasets.load_dataset(repo_id, "trl")
        for split in local:
            assert remote[split].to_list() == local[split].to_list(), split
        publish_dataset_dir(dataset_dir, repo_id, private=True)  # an update keeps working
        print("REAL HUB OK", repo_id)
    finally:
        api.delete_repo(repo_id, repo_type="dataset", missing_ok=True)
""")


@pytest.mark.skipif(not TOKEN, reason="set PREFBUILD_REAL_HUB_TOKEN to a write token to test against the real Hub")
@pytest.mark.timeout(600)
def test_publish_round_trip_on_the_real_hub(tmp_path: Path) -> None:
    pairs = make_pairs(8)
    write_dataset_dir(tmp_path / "dataset", {"trl": trl_rows(pairs)}, pairs, CardInfo(pretty_name="prefbuild test"))
    env = {key: value for key, value in os.environ.items() if not key.startswith("HF_")}
    env.update(HF_TOKEN=TOKEN or "", HF_HOME=str(tmp_path / "hf-home"), HF_HUB_DISABLE_TELEMETRY="1")
    name = f"prefbuild-test-{uuid.uuid4().hex[:8]}"
    result = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path / "dataset"), name], env=env,
                            capture_output=True, text=True, timeout=540, cwd=Path(__file__).resolve().parents[2])
    assert result.returncode == 0, result.stderr[-4000:]
    assert "REAL HUB OK" in result.stdout
