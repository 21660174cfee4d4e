"""Labelers never raise on a trajectory the records model accepts (property-based)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prefbuild.labelers import BUILTIN_LABELERS, build_labelers, label_trajectory
from prefbuild.records import EnvInfo, Outcome, SqlFacts, Step, StepFacts, StopReason, TaskInfo, TeacherInfo, Trajectory

PIECES = [
    "ACTION: ",
    "Action: ",
    " ACTION: go to cabinet 3",
    "THOUGHT: ",
    "Thought: ",
    "think: ",
    "Task succeeded.",
    "The task is complete.",
    "Nothing happens.",
    "You pick up the apple 1 from the fridge 1.",
    "You put the apple 1 in/on the countertop 1.",
    "On the countertop 1, you see a knife 1, and a apple 2.",
    "The fridge 1 is open. In it, you see nothing.",
    "go to toilet 1",
    "open fridge 1",
    "take knife 3 from drawer 9",
    "put apple 1 in/on fridge 1",
    "examine apple 1",
    "Certainly! ",
    "承知いたしました。",
    "I need to find a knife. ",
    "```sql\nINSERT INTO t VALUES (1);\n```",
    "Action: Operation\n",
    'Action: Answer\nFinal Answer: ["x"]',
    "Operation: SELECT 1;",
    'Answer: ["1"]',
    "1064 (42000): You have an error",
    "\n",
    "```",
    " AVAILABLE ACTIONS: go to a 1\nlook\n",
]
texts = st.one_of(st.text(max_size=40), st.lists(st.sampled_from(PIECES), max_size=8).map("".join))
goals = st.one_of(
    st.sampled_from(
        [
            "put a clean knife in drawer.",
            "put some knife on drawer.",
            "heat some egg and put it in diningtable.",
            "look at alarmclock under the desklamp.",
            "find two pillow and put them in armchair.",
            "put two cellphone in sofa.",
            "Add a row to the table.",
        ]
    ),
    st.text(max_size=30),
)
facts_strategy = st.builds(
    StepFacts,
    won=st.none() | st.booleans(),
    executed_action=st.none() | texts,
    admissible=st.none() | st.lists(texts, max_size=3),
    final=st.booleans(),
    problems=st.lists(texts, max_size=2),
    sql=st.none()
    | st.builds(
        SqlFacts,
        turn=st.none() | st.sampled_from(["operation", "answer", "invalid"]),
        executed=st.none() | texts,
        error=st.none() | texts,
        mutated=st.none() | st.booleans(),
        answer=st.none() | texts,
    ),
)


@st.composite
def trajectories(draw: st.DrawFn) -> Trajectory:
    count = draw(st.integers(min_value=0, max_value=14))
    steps = [
        Step(
            index=index,
            observation=draw(texts),
            raw_output=draw(texts),
            thought=draw(st.none() | texts),
            action=draw(st.none() | texts),
            format_ok=draw(st.booleans()),
            normalized=draw(st.lists(texts, max_size=2)),
            valid=draw(st.none() | st.booleans()),
            feedback=draw(texts),
            done=draw(st.booleans()),
            facts=draw(facts_strategy),
        )
        for index in range(count)
    ]
    success = bool(steps) and steps[-1].done and draw(st.booleans())
    reason = StopReason.success if success else draw(st.sampled_from([r for r in StopReason if r.value != "success"]))
    return Trajectory(
        id=draw(st.text(min_size=1, max_size=8)),
        task=TaskInfo(
            id="t",
            type=draw(st.sampled_from(["pick_and_place_simple", "INSERT", "counting", "", "look_at_obj_in_light"])),
            goal=draw(goals),
            split="train",
            meta=draw(
                st.dictionaries(
                    st.sampled_from(["outcome_known", "kind"]), st.none() | st.booleans() | texts, max_size=2
                )
            ),
        ),
        env=EnvInfo(
            name=draw(st.sampled_from(["household", "sql", "toolenv"])),
            protocol=draw(st.sampled_from(["agentbench", "react", "eto", "toolcall", "dbbench", "unknown"])),
        ),
        teacher=TeacherInfo(backend="scripted", model="m"),
        steps=steps,
        outcome=Outcome(success=success, stop_reason=reason, error="boom" if reason is StopReason.error else None),
    )


@settings(deadline=None, max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(trajectories())
def test_builtin_labelers_never_raise(trajectory: Trajectory) -> None:
    for cls in BUILTIN_LABELERS.values():
        labeler = cls()
        labels = labeler.label(trajectory)
        assert all(0 <= label.step < len(trajectory.steps) for label in labels)


@settings(deadline=None, max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(trajectories())
def test_label_trajectory_accepts_every_record(trajectory: Trajectory) -> None:
    labelled = label_trajectory(trajectory, build_labelers(None, env=None))
    # The result is itself a valid record.
    assert Trajectory.model_validate_json(labelled.model_dump_json()) == labelled
