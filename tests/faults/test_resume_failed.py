"""Resume plays episodes that ended in error again (the failed records kept for the audit trail)."""

from __future__ import annotations

import json
from pathlib import Path

from prefbuild.io.rundir import read_manifest
from prefbuild.recipe import load_recipe_text
from prefbuild.rollout.generate import generate
from tests.rollout.test_generate import RECIPE, _register_toy  # noqa: F401 - the toy env's recipe and fixture
from tests.rollout.toy import ProgrammedTeacher


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _outage_then(out: Path, **options: bool):
    recipe = load_recipe_text(RECIPE, "toy.yaml")
    down = generate(recipe, out=out, quiet=True, teacher=ProgrammedTeacher(lambda messages, n: "<fail>"))
    assert down.stats.errors == 6
    healthy = ProgrammedTeacher(lambda messages, n: "ACTION: inc")
    return generate(recipe, out=out, quiet=True, teacher=healthy, **options)


def test_resume_retries_failed_episodes_and_keeps_them_for_audit(tmp_path: Path) -> None:
    out = tmp_path / "run"
    again = _outage_then(out)
    assert again.retried == 6 and again.stats.done == 6 and again.stats.errors == 0
    final = _lines(out / "trajectories" / "episodes.jsonl")
    assert [record["outcome"]["stop_reason"] for record in final] == ["success"] * 6
    failed = _lines(out / "trajectories" / "failed" / "episodes.jsonl")
    assert len(failed) == 6 and {record["outcome"]["stop_reason"] for record in failed} == {"error"}
    assert [record["id"] for record in failed] == [record["id"] for record in final]  # both in plan order
    manifest = read_manifest(out)
    assert manifest.counts["episodes"] == 6 and manifest.counts["errors"] == 0
    # A third run has nothing left to do, and the audit file is not appended twice.
    third = generate(load_recipe_text(RECIPE, "toy.yaml"), out=out, quiet=True,
                     teacher=ProgrammedTeacher(lambda messages, n: "ACTION: inc"))
    assert third.retried == 0 and third.stats.done == 0 and third.stats.skipped == 6
    assert len(_lines(out / "trajectories" / "failed" / "episodes.jsonl")) == 6


def test_keep_failed_leaves_failed_episodes_as_they_are(tmp_path: Path) -> None:
    out = tmp_path / "run"
    again = _outage_then(out, keep_failed=True)
    assert again.retried == 0 and again.stats.done == 0 and again.stats.skipped == 6
    final = _lines(out / "trajectories" / "episodes.jsonl")
    assert {record["outcome"]["stop_reason"] for record in final} == {"error"}
    assert not (out / "trajectories" / "failed").exists()
    assert read_manifest(out).counts["errors"] == 6


def test_keep_failed_is_a_cli_flag(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from prefbuild.cli.main import main

    result = CliRunner().invoke(main, ["generate", "--help"])
    assert "--keep-failed" in result.output
