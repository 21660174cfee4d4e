"""BFCL v4 multi-turn result files (``bfcl generate``'s JSONL) read as bfcl trajectories.

The fixture ``data/`` was written by bfcl-eval's own generation pipeline and handlers against a
scripted server (``make_results.py``). Expectations come from bfcl-eval itself: its checker's
verdict on the same files (``verdicts.py``, run in a process of its own) and the handler's own
inference log (decoded calls, tool results), not from the importer.
"""

from __future__ import annotations

import doctest
import json
import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from prefbuild.cli.main import main
from prefbuild.io.importers import bfcl as bfcl_importer
from prefbuild.io.importers import bfcl_decode
from prefbuild.io.importers.bfcl_decode import decode_response, entry_kind
from prefbuild.io.jsonl import read_records
from prefbuild.io.sources import detect_format, read_trajectories
from prefbuild.labelers import build_labelers
from prefbuild.labelers.stage import label_trajectories
from prefbuild.records import Pair, Role, StopReason, Trajectory
from tests.bfclimport.harness import MODELS

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
ROOT = HERE.parents[1]
QWEN_FC, OPENAI_FC, QWEN_PROMPT = MODELS
FOLDERS = {model: model.replace("/", "_") for model in MODELS}
QWEN_BASE = DATA / FOLDERS[QWEN_FC] / "multi_turn" / "BFCL_v4_multi_turn_base_result.json"


def files(model: str) -> list[Path]:
    return sorted((DATA / FOLDERS[model] / "multi_turn").glob("*.json"))


def entries(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def imported() -> dict[tuple[str, str], Trajectory]:
    """Every imported trajectory by (model, entry id)."""
    found = {}
    for model in MODELS:
        for path in files(model):
            for trajectory in read_trajectories(path):
                found[(model, trajectory.task.id)] = trajectory
    return found


@pytest.fixture(scope="module")
def verdicts() -> dict[tuple[str, str], dict[str, Any]]:
    """BFCL's own checker verdict per (model, entry id), from ``bfcl evaluate``'s per-entry check."""
    found = {}
    for model in MODELS:
        command = [sys.executable, str(HERE / "verdicts.py"), model, *map(str, files(model))]
        output = subprocess.run(command, capture_output=True, text=True, check=True, cwd=ROOT,
                                env={**_env(), "PYTHONPATH": str(ROOT)}).stdout
        found.update({(model, entry_id): verdict for entry_id, verdict in json.loads(output.splitlines()[-1]).items()})
    return found


def _env() -> dict[str, str]:
    import os

    return {**os.environ, "OPENAI_API_KEY": "unused"}


def test_the_fixture_is_small_and_detected() -> None:
    assert sum(path.stat().st_size for path in DATA.rglob("*.json")) < 300_000
    for model in MODELS:
        for path in files(model):
            for record in entries(path):
                assert detect_format(record) == "bfcl"


def test_the_outcome_is_bfcls_own_verdict(imported: dict[tuple[str, str], Trajectory],
                                          verdicts: dict[tuple[str, str], dict[str, Any]]) -> None:
    assert len(verdicts) == 12
    skipped = {key for key in verdicts if key not in imported}
    # the one entry whose inference failed has no steps and is skipped; BFCL fails it as an inference error
    assert skipped == {(QWEN_FC, "multi_turn_base_9")}
    assert verdicts[(QWEN_FC, "multi_turn_base_9")]["error_type"] == "multi_turn:inference_error"
    for key, trajectory in imported.items():
        assert trajectory.outcome.success == verdicts[key]["valid"], (key, verdicts[key])
    assert sum(verdict["valid"] for verdict in verdicts.values()) == 5


def test_failed_turns_carry_bfcls_error_types(imported: dict[tuple[str, str], Trajectory],
                                              verdicts: dict[tuple[str, str], dict[str, Any]]) -> None:
    for key, trajectory in imported.items():
        error_type = verdicts[key]["error_type"]
        failed = [step.info["verdict"]["error_type"] for step in trajectory.steps
                  if "verdict" in step.info and not step.info["verdict"]["valid"] and step.info["verdict"]["scored"]]
        if error_type == "multi_turn:force_terminated":
            # BFCL stops the entry at the step limit: no turn is checked, the last step says why
            assert failed == [] and trajectory.steps[-1].facts.stop and trajectory.steps[-1].done
            assert len(trajectory.steps) == 21 and trajectory.task.meta["recorded_turns"] == 1
            assert trajectory.outcome.stop_reason is StopReason.max_steps  # cut by BFCL, not ended by the agent
        elif error_type is None:
            assert failed == [] and trajectory.steps[-1].facts.won and trajectory.steps[-1].facts.final
            assert trajectory.outcome.stop_reason is StopReason.success
        else:
            assert failed[0] == error_type, key


def test_steps_follow_the_recorded_responses(imported: dict[tuple[str, str], Trajectory]) -> None:
    for model in MODELS:
        for path in files(model):
            for record in entries(path):
                if isinstance(record["result"], str):
                    continue
                trajectory = imported[(model, record["id"])]
                responses = [response for turn in record["result"] for response in turn]
                assert len(trajectory.steps) == len(responses)
                for step, response in zip(trajectory.steps, responses, strict=True):
                    if isinstance(response, list):  # structured FC calls: kept as the handler recorded them
                        assert step.raw_output == "" and step.info["bfcl"]["response"] == response
                        assert step.native_tool_calls == bool(step.tool_calls)
                    else:
                        assert step.raw_output == response
                assert trajectory.env.protocol == ("python" if model == QWEN_PROMPT else "hermes")
                assert trajectory.teacher.model == FOLDERS[model]
                assert trajectory.usage.prompt_tokens == sum(sum(turn) for turn in record["input_token_count"])


def test_user_turns_are_the_observations(imported: dict[tuple[str, str], Trajectory]) -> None:
    trajectory = imported[(QWEN_FC, "multi_turn_miss_func_30")]
    openings = [step for step in trajectory.steps if step.observation_role == "user"]
    assert [step.info["bfcl"]["turn"] for step in openings] == [0, 1, 2]
    assert openings[0].observation == trajectory.task.goal
    assert "<tools>" in openings[1].observation and '"name": "cd"' in openings[1].observation  # revealed function
    assert trajectory.messages[0].role is Role.system and '"name": "cd"' not in trajectory.messages[0].content
    native = imported[(OPENAI_FC, "multi_turn_base_12")]
    assert native.messages == [] and native.tools and all(step.offered_tools is None for step in native.steps)


def test_decoding_agrees_with_the_handlers_own(imported: dict[tuple[str, str], Trajectory]) -> None:
    checked = 0
    for model in MODELS:
        for path in files(model):
            for record in entries(path):
                if isinstance(record["result"], str):
                    continue
                logs = [item for item in record["inference_log"] if isinstance(item, dict)]
                kind = entry_kind(record["result"])
                for turn, responses in enumerate(record["result"]):
                    for step, response in enumerate(responses):
                        log = logs[turn][f"step_{step}"]
                        decoded = next(item for item in log if item["role"] == "handler_log")
                        ours = decode_response(response, kind)
                        if "model_response_decoded" in decoded:
                            assert ours.error is None and ours.texts == decoded["model_response_decoded"], response
                        else:
                            assert ours.error is not None, response
                        checked += 1
    assert checked == 72


def test_logged_tool_results_are_the_imported_ones(imported: dict[tuple[str, str], Trajectory]) -> None:
    compared = 0
    for model in MODELS:
        for path in files(model):
            for record in entries(path):
                if isinstance(record["result"], str):
                    continue
                trajectory = imported[(model, record["id"])]
                logs = [item for item in record["inference_log"] if isinstance(item, dict)]
                steps = iter(trajectory.steps)
                for turn, responses in enumerate(record["result"]):
                    for index in range(len(responses)):
                        step = next(steps)
                        logged = [item["content"] for item in logs[turn][f"step_{index}"] if item["role"] == "tool"]
                        following = trajectory.steps[step.index + 1] if step.index + 1 < len(trajectory.steps) else None
                        replayed = [m.content for m in (following.observation_messages or []) if m.role is Role.tool] \
                            if following and step.tool_calls else []
                        if following is not None or not step.tool_calls:
                            assert replayed == logged, (record["id"], turn, index)
                        assert len(step.facts.tools) == len(logged)
                        assert "logged_results" not in step.info["bfcl"]
                        compared += len(logged)
    assert compared > 40


def test_labels_on_the_scripted_failures(imported: dict[tuple[str, str], Trajectory]) -> None:
    # Expected before running: the wrong call (base_13: cd into a missing folder, then calls that
    # fail) gets tool_error on each failing call's step; the undecodable call (base_7) a
    # malformed_tool_call on its step (it attempted calls: the narrow mode, in place of the
    # format_violation first expected here); the 21 identical calls (base_1) repeated_tool_call; the
    # correct entries nothing. The missing call (base_11) has no step of its own to label.
    labelled = {(key[0], trajectory.task.id): trajectory
                for key, trajectory in zip(imported, label_trajectories(iter(imported.values()), build_labelers(None)),
                                           strict=True)}

    def modes(model: str, entry_id: str) -> set[tuple[int, str]]:
        return {(label.step, label.mode) for label in labelled[(model, entry_id)].labels}

    assert modes(QWEN_FC, "multi_turn_base_13") == {(0, "tool_error"), (1, "tool_error"), (3, "tool_error")}
    for model in (QWEN_FC, OPENAI_FC):
        assert modes(model, "multi_turn_base_7") == {(4, "malformed_tool_call")}
    assert {mode for _, mode in modes(QWEN_FC, "multi_turn_base_1")} == {"repeated_tool_call"}
    for key in [(QWEN_FC, "multi_turn_base_12"), (OPENAI_FC, "multi_turn_base_12"), (QWEN_PROMPT, "multi_turn_base_12"),
                (QWEN_FC, "multi_turn_miss_func_30"), (QWEN_FC, "multi_turn_miss_param_12")]:
        assert modes(*key) == set(), key


def test_a_plain_text_answer_of_an_fc_model_is_a_message_not_a_malformed_call(
        imported: dict[tuple[str, str], Trajectory]) -> None:
    trajectory = imported[(OPENAI_FC, "multi_turn_base_12")]
    answers = [step for step in trajectory.steps if not step.tool_calls]
    assert next(step.raw_output for step in answers) == "I created summary.txt in Documents."
    assert all(step.format_ok and not step.facts.problems for step in answers)
    malformed = imported[(OPENAI_FC, "multi_turn_base_7")].steps[-1]
    assert not malformed.format_ok and malformed.facts.problems[0].startswith("Error decoding the model response")


@pytest.mark.parametrize("with_log", [True, False])
def test_a_text_answer_recorded_as_text_blocks_is_a_message_not_a_malformed_call(
        with_log: bool, tmp_path: Path) -> None:
    """Claude, Gemini and Nova FC handlers record a text answer as the list of its text blocks
    (``["Done."]``); BFCL fails to decode it and ends the turn, as for any FC text answer."""
    path = DATA / FOLDERS[OPENAI_FC] / "multi_turn" / "BFCL_v4_multi_turn_base_result.json"
    record = next(entry for entry in entries(path) if entry["id"] == "multi_turn_base_12")
    texts = []
    for turn, steps in enumerate(record["result"]):
        for index, response in enumerate(steps):
            if isinstance(response, str):
                texts.append(response)
                steps[index] = [response]
                log = [item for item in record["inference_log"] if isinstance(item, dict)][turn]
                log[f"step_{index}"][0]["content"] = [response]
    if not with_log:
        del record["inference_log"]
    blocks = tmp_path / "BFCL_v4_multi_turn_base_result.json"
    blocks.write_text(json.dumps(record) + "\n")
    (trajectory,) = read_trajectories(blocks)
    answers = [step for step in trajectory.steps if not step.tool_calls]
    assert [step.raw_output for step in answers] == texts == [
        "I created summary.txt in Documents.", "summary.txt holds the topic now.", "summary.txt has 2 words."]
    assert [json.loads(step.action)["message"] for step in answers] == texts
    assert all(step.format_ok and not step.facts.problems for step in answers)
    assert trajectory.outcome.success


def test_token_counts_recorded_as_floats_are_kept(tmp_path: Path) -> None:
    """Cohere's FC handler (command-a-03-2025-FC) records token counts as floats (``[[2923.0, 2996.0]]``)."""
    path = DATA / FOLDERS[OPENAI_FC] / "multi_turn" / "BFCL_v4_multi_turn_base_result.json"
    record = next(entry for entry in entries(path) if entry["id"] == "multi_turn_base_12")
    for key in ("input_token_count", "output_token_count"):
        record[key] = [[float(count) for count in turn] for turn in record[key]]
    floats = tmp_path / "BFCL_v4_multi_turn_base_result.json"
    floats.write_text(json.dumps(record) + "\n")
    (trajectory,) = read_trajectories(floats)
    assert trajectory.usage.prompt_tokens == sum(sum(turn) for turn in record["input_token_count"]) > 0
    assert trajectory.usage.completion_tokens == sum(sum(turn) for turn in record["output_token_count"]) > 0
    assert [step.usage.prompt_tokens for step in trajectory.steps] == [
        int(count) for turn in record["input_token_count"] for count in turn]


def test_label_stats_and_pair_end_to_end(tmp_path: Path) -> None:
    runner = CliRunner()
    labelled = tmp_path / "labelled.jsonl"
    result = runner.invoke(main, ["label", str(QWEN_BASE), "-o", str(labelled)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    trajectories = list(read_records(labelled, Trajectory))
    assert [t.id for t in trajectories] == [
        f"{FOLDERS[QWEN_FC]}/BFCL_v4_multi_turn_base_result#multi_turn_base_{n}" for n in (1, 7, 11, 12, 13)
    ]
    result = runner.invoke(main, ["stats", str(labelled)], catch_exceptions=False)
    assert result.exit_code == 0 and "tool_error" in result.output, result.output
    pairs_path = tmp_path / "pairs.jsonl"
    args = ["pair", str(labelled), "-o", str(pairs_path), "--strategy", "style", "--test-fraction", "0"]
    result = runner.invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    for pair in read_records(pairs_path, Pair):
        assert pair.prompt[0].role is Role.system


def _broken(tmp_path: Path, name: str) -> tuple[Path, str]:
    """A broken copy of the Qwen FC base file and the start of the one error line it must give."""
    lines = QWEN_BASE.read_text().splitlines()
    path = tmp_path / "BFCL_v4_multi_turn_base_result.json"
    record = json.loads(lines[4])  # multi_turn_base_12, line 5
    if name == "unknown_id":
        record["id"] = "multi_turn_base_9999"
        expected = f"{path}:5 id: no BFCL entry 'multi_turn_base_9999'"
    elif name == "single_turn":
        record["id"] = "simple_python_3"
        expected = f"{path}:5 id: 'simple_python_3' is a single-turn BFCL entry: only multi-turn result files"
    elif name == "too_many_turns":
        record["result"].append(["Done."])
        expected = f"{path}:5 result: 4 turns recorded but entry multi_turn_base_12 has 3"
    elif name == "too_few_turns":
        record["result"].pop()
        expected = f"{path}:5 result: 2 turns recorded but entry multi_turn_base_12 has 3"
    elif name == "turn_ends_with_calls":
        record["result"][0].pop()
        expected = f"{path}:5 result[0][0]: the turn's last step made calls"
    else:
        assert name == "not_json"
        lines[4] = lines[4][:100]
        path.write_text("\n".join(lines) + "\n")
        return path, f"{path}:5: invalid JSON"
    lines[4] = json.dumps(record)
    path.write_text("\n".join(lines) + "\n")
    return path, expected


@pytest.mark.parametrize("name", ["unknown_id", "single_turn", "too_many_turns", "too_few_turns",
                                  "turn_ends_with_calls", "not_json"])
def test_a_broken_result_file_gives_one_located_error_line(name: str, tmp_path: Path) -> None:
    path, expected = _broken(tmp_path, name)
    result = CliRunner().invoke(main, ["label", str(path), "-o", str(tmp_path / "out.jsonl")], catch_exceptions=False)
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert result.exit_code != 0 and "Traceback" not in result.output, result.output
    assert len(errors) == 1, result.output
    assert errors[0].startswith(f"error: {expected}"), (errors[0], expected)
    assert not (tmp_path / "out.jsonl").exists()


def test_without_bfcl_eval_one_line_says_to_install_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bfcl_importer.importlib.util, "find_spec", lambda name: None)
    result = CliRunner().invoke(main, ["label", str(QWEN_BASE), "-o", str(tmp_path / "out.jsonl")],
                                catch_exceptions=False)
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert result.exit_code != 0 and len(errors) == 1 and "Traceback" not in result.output, result.output
    assert "install the 'bfcl' extra" in errors[0]


def test_tool_results_that_differ_on_replay_keep_the_replays_and_warn(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    record = entries(QWEN_BASE)[4]
    record["inference_log"][1]["step_0"][2]["content"] = "something else"  # the logged result of cd
    path = tmp_path / "result.json"
    path.write_text(json.dumps(record) + "\n")
    with caplog.at_level(logging.WARNING):
        (trajectory,) = read_trajectories(path)
    assert "1 step(s) of multi_turn_base_12 got other tool results on replay" in caplog.text
    first = trajectory.steps[0]
    assert first.info["bfcl"]["logged_results"][0] == "something else"
    assert trajectory.steps[1].observation_messages[0].content == '{"current_working_directory": "Documents"}'
    assert trajectory.outcome.success


def test_the_docstring_examples_run() -> None:
    for module in (bfcl_importer, bfcl_decode):
        assert doctest.testmod(module).failed == 0
