"""Resolved secrets never reach a file of the run directory or the console.

A real ``prefbuild run`` (a subprocess, the way a user runs it) with every kind of secret a
recipe takes from the environment: the API key, a ``${VAR}`` inside ``sampling.extra_body``,
the password of a base URL and an env option. Every file under the run directory and all
console output are searched for each resolved value, in clear and URL-encoded.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.teachers.fake_openai import FakeOpenAIServer

DATA = Path(__file__).resolve().parents[1] / "sql" / "data" / "dbbench_sample.jsonl"

RECIPE = """\
name: secrets
seed: 3
env:
  name: sql
  protocol: dbbench
  num_tasks: 2
  max_steps: 2
  options: {{data_file: "${{PB_SECRET_DATA_FILE}}"}}
teacher:
  backend: openai
  model: fake-model
  base_urls: ["http://tester:${{PB_SECRET_URL_PASSWORD}}@127.0.0.1:{port}/v1"]
  api_key_env: PB_SECRET_API_KEY
  concurrency: 2
  cooldown_s: 0
  retries: {{max_attempts: 1}}
  sampling: {{temperature: 0, max_tokens: 16, extra_body: {{auth_token: "${{PB_SECRET_EXTRA_TOKEN}}"}}}}
output:
  formats: [trl]
"""


def _secrets(tmp_path: Path) -> dict[str, str]:
    folder = tmp_path / "vault-dir-Qx81"
    folder.mkdir()
    shutil.copy(DATA, folder / "items.jsonl")
    return {
        "PB_SECRET_API_KEY": "sk-api-key-7f3a9c2e",
        "PB_SECRET_EXTRA_TOKEN": "extra-body-token-b71d",
        "PB_SECRET_URL_PASSWORD": "url-pass-w0rd-55e1",
        "PB_SECRET_DATA_FILE": str(folder / "items.jsonl"),
    }


def _run(tmp_path: Path, port: int, out: Path, secrets: dict[str, str], *extra: str) -> subprocess.CompletedProcess:
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(RECIPE.format(port=port))
    env = {**os.environ, **secrets, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    return subprocess.run(
        [sys.executable, "-m", "prefbuild", "run", str(recipe), "--out", str(out), "--quiet", *extra],
        capture_output=True, text=True, env=env, timeout=240, cwd=tmp_path,
    )


def _leaks(out: Path, console: str, secrets: dict[str, str]) -> list[str]:
    values = {value for value in secrets.values()} | {quote(value, safe="") for value in secrets.values()}
    leaks = [f"console: {value}" for value in values if value in console]
    for path in sorted(out.rglob("*")):
        if path.is_file():
            data = path.read_bytes()
            leaks += [f"{path.relative_to(out)}: {value}" for value in values if value.encode() in data]
    return leaks


@pytest.fixture
def server():
    fake = FakeOpenAIServer().start()
    yield fake
    fake.stop()


def test_a_run_with_secrets_writes_and_prints_none_of_them(tmp_path: Path, server: FakeOpenAIServer) -> None:
    secrets = _secrets(tmp_path)
    out = tmp_path / "run"
    result = _run(tmp_path, server.port, out, secrets)
    console = result.stdout + result.stderr
    assert "Traceback" not in console, console
    assert server.requests, "the teacher was never asked: the secrets were not used"
    assert server.requests[0]["auth_token"] == secrets["PB_SECRET_EXTRA_TOKEN"]  # the value was sent
    assert all("Authorization" in headers for headers in server.headers)  # the URL's or the key's credentials
    files = [path for path in out.rglob("*") if path.is_file()]
    assert any(path.name == "episodes.jsonl" for path in files) and (out / "recipe.yaml").is_file()
    assert "${PB_SECRET_EXTRA_TOKEN}" in (out / "trajectories" / "episodes.jsonl").read_text()
    assert _leaks(out, console, secrets) == []


def test_errors_naming_a_url_with_a_password_are_masked(tmp_path: Path) -> None:
    """The server is down: every episode's error text names the endpoint, password masked."""
    secrets = _secrets(tmp_path)
    out = tmp_path / "run"
    closed = FakeOpenAIServer().start()
    port = closed.port
    closed.stop()
    result = _run(tmp_path, port, out, secrets)
    console = result.stdout + result.stderr
    assert result.returncode != 0 and "Traceback" not in console, console
    text = (out / "trajectories" / "episodes.jsonl").read_text()
    assert '"stop_reason":"error"' in text and "127.0.0.1" in text
    assert _leaks(out, console, secrets) == []
