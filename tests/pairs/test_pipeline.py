"""The streaming pipeline: validation, dedup, per-trajectory caps, per-reason balance, split by task."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest

from prefbuild.pairs import PairStrategy, build_pairs
from prefbuild.pairs.base import InvalidPair
from prefbuild.pairs.postprocess import split_for
from prefbuild.records import Message, Pair, PairSource, Role, Trajectory
from tests.pairs.factory import S, act, trajectory


def labelled(traj_id: str, task_id: str, modes: list[str], *, variant: str = "") -> Trajectory:
    """One bad step per entry of ``modes``; each step's observation makes its prompt unique."""
    steps = [
        S(
            act(f"go to drawer {i}"),
            f"go to drawer {i}",
            expert="go to cabinet 1",
            labels=[(mode, 1.0)],
            observation=f"You see drawer {i}{variant}. Task {task_id}.",
        )
        for i, mode in enumerate(modes)
    ]
    return trajectory(steps, traj_id=traj_id, task_id=task_id)


def test_exact_duplicates_are_counted_once_and_near_duplicates_only_when_asked():
    first = labelled("t1", "task-1", ["loop", "loop"])
    same_content = labelled("t2", "task-1", ["loop", "loop"])  # another episode, identical turns
    shouty = labelled("t3", "task-1", ["loop", "loop"], variant="")
    shouty = shouty.model_copy(
        update={"steps": [s.model_copy(update={"observation": s.observation.upper()}) for s in shouty.steps]}
    )
    report = build_pairs([first, same_content, shouty], [{"name": "stepwise"}], test_fraction=0.0)
    pairs = report.collect()
    assert len(pairs) == 4 and report.counts.duplicates == 2 and report.counts.near_duplicates == 0
    report = build_pairs([first, same_content, shouty], [{"name": "stepwise"}], near_dedup=True, test_fraction=0.0)
    assert len(report.collect()) == 2
    assert report.counts.duplicates == 2 and report.counts.near_duplicates == 2
    assert report.counts.built == {"stepwise": 6}


def test_max_per_reason_keeps_exactly_k_per_reason_independent_of_order():
    trajectories = [labelled(f"t{i}", f"task-{i}", ["loop", "loop", "invalid_action"]) for i in range(5)]
    report = build_pairs(trajectories, [{"name": "stepwise"}], max_per_reason=4, test_fraction=0.0, seed=3)
    pairs = report.collect()
    assert Counter(p.reason for p in pairs) == {"loop": 4, "invalid_action": 4}
    assert report.counts.balanced_out == {"loop": 6, "invalid_action": 1}
    assert report.counts.kept == 8 and report.counts.by_reason == {"loop": 4, "invalid_action": 4}
    reversed_ids = {
        p.id
        for p in build_pairs(trajectories[::-1], [{"name": "stepwise"}], max_per_reason=4, test_fraction=0.0, seed=3)
    }
    assert reversed_ids == {p.id for p in pairs}
    other_seed = {
        p.id for p in build_pairs(trajectories, [{"name": "stepwise"}], max_per_reason=4, test_fraction=0.0, seed=4)
    }
    assert other_seed != reversed_ids


def test_max_per_trajectory_caps_each_source_episode():
    trajectories = [labelled("t1", "task-1", ["loop"] * 5), labelled("t2", "task-2", ["loop"] * 2)]
    report = build_pairs(trajectories, [{"name": "stepwise"}], max_per_trajectory=3, test_fraction=0.0)
    pairs = report.collect()
    assert Counter(p.source.trajectory_id for p in pairs) == {"t1": 3, "t2": 2}
    assert report.counts.capped_per_trajectory == 2


def test_split_is_by_task_id_so_no_task_is_in_both_splits():
    trajectories = [
        labelled(f"t{i}-{j}", f"task-{i}", ["loop", "invalid_action"], variant=str(j))
        for i in range(40)
        for j in range(2)
    ]
    pairs = build_pairs(trajectories, [{"name": "stepwise"}], test_fraction=0.25, seed=11).collect()
    splits: dict[str, set[str]] = {}
    for pair in pairs:
        splits.setdefault(pair.source.task_id, set()).add(pair.split)
    assert all(len(found) == 1 for found in splits.values())
    test_tasks = sum(found == {"test"} for found in splits.values())
    assert 4 <= test_tasks <= 18  # about a quarter of 40 tasks
    assert all(split_for(f"task-{i}", 0.25, 11) == next(iter(splits[f"task-{i}"])) for i in range(40))
    assert split_for("task-1", 0.0, 11) == "train"


class BrokenStrategy(PairStrategy):
    """A plug-in that builds pairs without validation (``model_construct``)."""

    name: ClassVar[str] = "broken"

    def feed(self, traj: Trajectory) -> Iterator[Pair]:
        turn = Message(role=Role.assistant, content="ACTION: look")
        yield Pair.model_construct(
            id=f"broken-{traj.id}",
            strategy=self.name,
            prompt=[turn],
            chosen=[turn],
            rejected=[turn],
            reason=None,
            evidence=None,
            scores=None,
            split="train",
            schema_version="1.0",
            source=PairSource(trajectory_id=traj.id, task_id=traj.task.id, env="household", teacher_model="m"),
        )


def test_invalid_pairs_are_counted_with_why_and_never_yielded():
    trajectories = [labelled("t1", "task-1", ["loop"]), labelled("t2", "task-2", ["loop"])]
    report = build_pairs(trajectories, [{"name": "stepwise"}, BrokenStrategy()], test_fraction=0.0)
    pairs = report.collect()
    assert {p.strategy for p in pairs} == {"stepwise"}
    assert report.counts.invalid == {"broken:pair: the prompt must end with a user or tool turn, not 'assistant'": 2}
    assert report.counts.trajectories == 2


class TallyingStrategy(PairStrategy):
    """Leaves out one candidate per trajectory and builds one the records model refuses."""

    name: ClassVar[str] = "tallying"

    def feed(self, trajectory: Trajectory) -> Iterator[Pair]:
        self.stats.skip("not_interesting")

        def refused() -> Pair:
            raise InvalidPair("prompt_too_long", "over the limit")

        yield from self.emit(refused)


def test_a_strategy_reports_in_the_tally_shape_exports_use():
    strategy = TallyingStrategy()
    report = build_pairs([labelled("t1", "task-1", ["loop"]), labelled("t2", "task-2", ["loop"])], [strategy])
    assert report.collect() == []
    assert strategy.stats.as_dict() == {"kept": 0, "skipped": {"invalid:prompt_too_long": 2, "not_interesting": 2}}
    assert report.counts.dropped == {"tallying:not_interesting": 2}
    assert report.counts.invalid == {"tallying:prompt_too_long": 2}


def test_bad_arguments_are_reported():
    with pytest.raises(ValueError, match="test_fraction"):
        build_pairs([], [{"name": "stepwise"}], test_fraction=1.0)
    with pytest.raises(ValueError, match=r"strategies\[0\]: missing 'name'"):
        build_pairs([], [{"params": {}}])


def test_pairs_a_caller_iterates_own_their_messages_and_shared_gives_the_same_pairs():
    """Pairs of one trajectory share its history turns while built; the report's iteration
    hands out copies, so editing one pair in place changes neither its siblings nor the input."""
    source = labelled("t1", "task-1", ["loop", "invalid_action", "loop"])
    before = source.model_dump()
    shared = build_pairs([source], [{"name": "stepwise"}], test_fraction=0.0).shared()
    shared_pairs = list(shared)
    assert shared_pairs[1].prompt[0] is shared_pairs[2].prompt[0]  # the sharing the copies undo
    pairs = build_pairs([source], [{"name": "stepwise"}], test_fraction=0.0).collect()
    assert [pair.model_dump() for pair in pairs] == [pair.model_dump() for pair in shared_pairs]
    assert len(pairs) == 3
    for pair in pairs:
        for message in pair.prompt:
            message.content = "edited: " + message.content
    assert all(message.content.count("edited: ") == 1 for pair in pairs for message in pair.prompt)
    assert source.model_dump() == before


class EditingStrategy(PairStrategy):
    """A plug-in that edits a pair after ``make_pair``, then builds the edited content again."""

    name: ClassVar[str] = "editing"

    def feed(self, trajectory: Trajectory) -> Iterator[Pair]:
        from prefbuild.pairs.common import assistant, make_pair, source_for

        def build(text: str) -> Pair:
            return make_pair(
                self.name, prompt=[Message(role=Role.user, content="go on")], chosen=[assistant(text)],
                rejected=[assistant("go to drawer 1")], source=source_for(trajectory, 0), reason=None,
            )

        edited = build("go to cabinet 1")
        edited.chosen[0].content = "go to cabinet 2"  # in place: the pair's recorded hash is now stale
        yield edited
        yield build("go to cabinet 2")


def test_a_plugin_pair_edited_after_make_pair_is_hashed_as_it_is():
    report = build_pairs([labelled("t1", "task-1", ["loop"])], [EditingStrategy()], test_fraction=0.0)
    pairs = report.collect()
    assert [p.chosen[0].content for p in pairs] == ["go to cabinet 2"]
    assert report.counts.duplicates == 1


def test_balance_envs_cuts_every_env_to_the_smallest_and_is_seeded(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from prefbuild.io.rundir import iter_trajectories
    from prefbuild.labelers import build_labelers, label_trajectories
    from prefbuild.recipe import load_recipe
    from prefbuild.rollout.generate import generate

    loaded = load_recipe("agentbench-ironguard", ["teacher.backend=scripted", "teacher.model=scripted-expert"])
    generate(loaded, out=tmp_path / "run", quiet=True)
    played = list(iter_trajectories(tmp_path / "run"))
    labelled = [labelled for env in ("sql", "household") for labelled in label_trajectories(
        [t for t in played if t.env.name == env], build_labelers(None, env=env))]
    specs = [{"name": "style"}, {"name": "stepwise", "params": {"chosen": "template"}}]
    unbalanced = build_pairs(labelled, specs).collect()
    by_env = Counter(pair.source.env for pair in unbalanced)
    assert set(by_env) == {"sql", "household"} and by_env["sql"] != by_env["household"]
    report = build_pairs(labelled, specs, balance_envs=True)
    balanced = report.collect()
    fewest = min(by_env.values())
    assert Counter(pair.source.env for pair in balanced) == {"sql": fewest, "household": fewest}
    bigger = max(by_env, key=lambda env: by_env[env])
    assert report.counts.balanced_out == {f"env:{bigger}": by_env[bigger] - fewest}
    assert [p.id for p in build_pairs(labelled, specs, balance_envs=True).collect()] == [p.id for p in balanced]
    assert {p.id for p in balanced} <= {p.id for p in unbalanced}
    assert report.counts.as_dict()["trajectories_by_env"] == Counter(t.env.name for t in labelled)

    # An env whose episodes gave no pair is said, not silently left out of the balance.
    unlabelled_sql = [t.model_copy(update={"steps": [s.model_copy(update={"labels": []}) for s in t.steps]})
                      if t.env.name == "sql" else t for t in labelled]
    with caplog.at_level(logging.WARNING, logger="prefbuild.pairs.pipeline"):
        only_household = build_pairs(unlabelled_sql, [{"name": "stepwise", "params": {"chosen": "template"}}],
                                     balance_envs=True).collect()
    assert only_household and {pair.source.env for pair in only_household} == {"household"}
    assert any("no pair from the" in record.getMessage() and "sql" in record.getMessage()
               for record in caplog.records)
