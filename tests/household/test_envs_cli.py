"""``prefbuild envs``: the environment table and playing a household task from stdin."""

from __future__ import annotations

from click.testing import CliRunner

from prefbuild.cli.envs import envs
from prefbuild.envs.household.env import HouseholdEnv


def _expert_actions(seed: int, split: str, index: int, dialect: str = "classic") -> list[str]:
    """The expert's winning commands for the task the CLI will pick."""
    env = HouseholdEnv(dialect=dialect)
    task = list(env.tasks(split, index + 1, seed))[index]
    env.reset(task)
    actions = []
    for _ in range(60):
        action = env.expert_action()
        assert action is not None
        actions.append(action)
        if env.step(action).won:
            return actions
    raise AssertionError("the expert did not win")


def test_list_is_the_default_and_shows_household() -> None:
    runner = CliRunner()
    default = runner.invoke(envs, [], terminal_width=200)
    explicit = runner.invoke(envs, ["list"], terminal_width=200)
    assert default.exit_code == 0, default.output
    assert default.output == explicit.output
    assert "household" in default.output
    for word in ("classic", "modern", "agentbench", "react", "eto", "toolcall", "pick_heat_then_place_in_recep"):
        assert word in default.output


def test_play_with_the_expert_actions_until_the_win() -> None:
    actions = _expert_actions(3, "train", 0)
    result = CliRunner().invoke(envs, ["play", "household", "--seed", "3"], input="\n".join(actions) + "\n")
    assert result.exit_code == 0, result.output
    assert "Your task is to: " in result.output
    assert f"You won in {len(actions)} step(s)!" in result.output


def test_play_meta_commands_and_modern_dialect() -> None:
    actions = _expert_actions(7, "valid_seen", 1, dialect="modern")
    stdin = "help\nadmissible\n" + "expert\n" * len(actions)
    result = CliRunner().invoke(
        envs,
        ["play", "household", "--seed", "7", "--split", "valid_seen", "--index", "1", "--dialect", "modern"],
        input=stdin,
    )
    assert result.exit_code == 0, result.output
    assert "Meta commands:" in result.output
    assert "\ninventory\nlook\n" in result.output  # the admissible list
    assert f"expert: {actions[0]}" in result.output
    assert f"You won in {len(actions)} step(s)!" in result.output


def test_play_ends_cleanly_at_end_of_input() -> None:
    result = CliRunner().invoke(envs, ["play", "household", "--seed", "1"], input="look\nfly to the moon\n")
    assert result.exit_code == 0, result.output
    assert "Nothing happens." in result.output
    assert "end of input after 2 step(s); task not solved" in result.output


def test_play_reports_bad_input_without_traceback() -> None:
    runner = CliRunner()
    unknown = runner.invoke(envs, ["play", "nowhere"])
    assert unknown.exit_code != 0 and "unknown env 'nowhere'" in unknown.output
    dialect = runner.invoke(envs, ["play", "household", "--dialect", "ancient"])
    assert dialect.exit_code == 1 and "no dialect 'ancient'" in dialect.output
    split = runner.invoke(envs, ["play", "household", "--split", "nosuch"])
    assert split.exit_code == 1 and "nosuch" in split.output
    assert "Traceback" not in unknown.output + dialect.output + split.output
