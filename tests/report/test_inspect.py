"""``prefbuild inspect``: pairs side by side, trajectories step by step, filters and sampling."""

from __future__ import annotations

import functools
import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from prefbuild.analysis.text import clip
from prefbuild.analysis.views import (
    MAX_STEPS,
    OBSERVATION_CHARS,
    OUTPUT_CHARS,
    Filters,
    highlight_terms,
    inspect_file,
    render_pair,
    render_trajectory,
    sample,
)
from prefbuild.cli.analysis import inspect_command
from prefbuild.io.jsonl import write_records
from tests.publish.factories import make_pair, make_trajectory


def invoke(*args: str) -> str:
    result = CliRunner().invoke(inspect_command, [*args, "--no-pager"], terminal_width=200)
    assert result.exit_code == 0, result.output
    return result.output


def test_pairs_side_by_side_with_filters(run_dir: Path) -> None:
    output = invoke(str(run_dir / "pairs.jsonl"), "--reason", "invalid_action", "-n", "2")
    assert "2 of 4 matching pairs" in output
    assert "chosen" in output and "rejected" in output and "last observation" in output
    assert "ACTION: fly to the moon" in output and "label evidence" in output
    assert "reason=loop" not in output

    output = invoke(str(run_dir / "pairs.jsonl"), "--strategy", "trajectory", "--task-type", "pick_and_place")
    assert "matching pairs" in output
    assert "pair-0000" in output  # index 0: trajectory strategy, pick_and_place


def test_trajectory_transcript_with_label_markers(run_dir: Path) -> None:
    output = invoke(str(run_dir / "trajectories" / "shard-00000.jsonl"), "--reason", "loop", "-n", "1")
    assert "1 of 8 matching trajectories" in output
    assert "step 0" in output and "observation" in output and "feedback" in output
    assert "⚑ loop (0.90, loop@1)" in output and "step 2  ⚑ loop" in output
    assert "expert" in output


def test_seeded_sampling_is_reproducible_and_differs_from_the_head() -> None:
    records = list(range(100))
    first, matched = sample(records, 5, seed=None)
    assert first == [0, 1, 2, 3, 4] and matched == 100
    seeded, _ = sample(records, 5, seed=3)
    assert seeded == sample(records, 5, seed=3)[0]
    assert seeded != first and seeded == sorted(seeded)


def test_evidence_terms_are_highlighted() -> None:
    assert highlight_terms("action 'go to desk 1' repeated 3 times") == ["go to desk 1"]
    console = Console(record=True, width=160, color_system="truecolor")
    console.print(render_pair(make_pair(1)))
    html = console.export_html(inline_styles=True)
    assert "fly to the moon" in html and "background-color: #800000" in html


def test_pager_is_used_when_asked(run_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paged: list[str] = []

    class Pager:
        def show(self, content: str) -> None:
            paged.append(content)

    console = Console(width=120, force_terminal=True)
    monkeypatch.setattr(console, "pager", functools.partial(Console.pager, console, Pager()))
    inspect_file(run_dir / "pairs.jsonl", console, n=1, pager=True)
    assert paged and "pair-0000" in paged[0]
    paged.clear()
    inspect_file(run_dir / "pairs.jsonl", console, n=1, pager=False)
    assert not paged


def test_errors(run_dir: Path, bad_pairs: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(inspect_command, [str(bad_pairs), "-n", "5"])
    assert result.exit_code == 1 and f"{bad_pairs}:3" in result.output
    result = runner.invoke(inspect_command, [str(run_dir / "pairs.jsonl"), "--reason", "bogus"])
    assert result.exit_code == 1 and "not a failure mode" in result.output
    result = runner.invoke(inspect_command, [str(run_dir / "trajectories" / "shard-00000.jsonl"), "--strategy", "x"])
    assert result.exit_code == 1 and "applies to pair files" in result.output
    result = runner.invoke(inspect_command, [str(run_dir / "missing.jsonl")])
    assert result.exit_code == 1
    assert result.output.strip() == f"error: {run_dir / 'missing.jsonl'}: no such file or directory"
    assert Filters().pair(make_pair(0))


def test_run_directory_shows_its_pairs_or_else_its_episodes(simulated_run: Path, run_dir: Path) -> None:
    pairs = len((simulated_run / "pairs.jsonl").read_text().splitlines())
    assert f"1 of {pairs} matching pairs in" in invoke(str(simulated_run), "-n", "1")
    (run_dir / "pairs.jsonl").unlink()
    assert "1 of 12 matching trajectories" in invoke(str(run_dir), "-n", "1")


def test_one_huge_output_is_cut_and_says_how_much(tmp_path: Path) -> None:
    huge = "x" * 50_000_000
    trajectory = make_trajectory(1, success=False)
    steps = [trajectory.steps[0].model_copy(update={"raw_output": huge, "observation": huge})]
    steps += trajectory.steps[1:]
    path = tmp_path / "huge.jsonl"
    write_records(path, [trajectory.model_copy(update={"steps": steps})])
    output = invoke(str(path), "-n", "1")
    assert len(output) < 100_000
    assert f"[{50_000_000 - OUTPUT_CHARS:,} characters cut]" in output
    assert f"[{50_000_000 - OBSERVATION_CHARS:,} characters cut]" in output


def test_long_episodes_show_a_bounded_number_of_steps() -> None:
    trajectory = make_trajectory(2, success=False)
    steps = [trajectory.steps[0].model_copy(update={"index": i, "labels": []}) for i in range(MAX_STEPS + 5)]
    console = Console(record=True, width=120, file=open(os.devnull, "w"))  # noqa: SIM115
    console.print(render_trajectory(trajectory.model_copy(update={"steps": steps})))
    text = console.export_text()
    assert f"step {MAX_STEPS - 1}" in text and f"step {MAX_STEPS}\n" not in text
    assert f"5 more steps not shown (of {MAX_STEPS + 5})" in text


def test_clip_keeps_head_or_tail() -> None:
    assert clip("abcdef", 10) == "abcdef"
    assert clip("abcdef", 2) == "ab… [4 characters cut]"
    assert clip("abcdef", 2, keep="tail") == "[4 characters cut] …ef"


def test_the_searching_expert_is_shown_where_it_differs_from_action_and_oracle() -> None:
    trajectory = make_trajectory(3, success=False)
    steps = [
        step.model_copy(update={"searcher_action": searcher})
        for step, searcher in zip(
            trajectory.steps,
            ["open drawer 7", trajectory.steps[1].expert_action, *[None] * len(trajectory.steps)],
            strict=False,
        )
    ]
    console = Console(width=200, record=True)
    console.print(render_trajectory(trajectory.model_copy(update={"steps": steps})))
    text = console.export_text()
    assert text.count("searcher") == 1 and "open drawer 7" in text  # step 1's equals the oracle: not repeated
