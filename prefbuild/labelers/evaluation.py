"""Label quality: per-mode precision and recall at step level, for the labeler set as deployed.

A hand-labelled set is a log file in any format ``prefbuild label`` reads (prefbuild
trajectories, AgentBench ``runs.jsonl``, chat ``messages`` JSONL) plus a label sidecar,
one JSON line per episode::

    {"log": "alfworld_runs.jsonl", "record": 3, "id": "heat-egg-ok",
     "labels": [{"step": 4, "mode": "loop"}], "note": "..."}

``record`` is the 1-based line of the episode in ``log``. The logs are imported with the
same readers and labelled with the same labelers as ``prefbuild label`` (the default set,
default parameters), so the figures are those a user gets. A found label matches an
expected one when both name the same step and the same mode.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from prefbuild.io.sources import read_trajectories
from prefbuild.labelers import build_labelers, label_trajectory
from prefbuild.labelers.base import Labeler
from prefbuild.records import FailureMode, Trajectory

PHANTOM_OBJECT = FailureMode.phantom_object.value
SCORED_MODES: tuple[str, ...] = (
    FailureMode.loop.value,
    FailureMode.premature_success.value,
    FailureMode.implausible_location.value,
    FailureMode.verbose_filler.value,
    FailureMode.format_violation.value,
    FailureMode.invalid_action.value,
    FailureMode.sql_error.value,
    FailureMode.wrong_answer.value,
    PHANTOM_OBJECT,
)
# The modes of the tool-env labelers (``wrong_answer`` is already scored). A set is scored on them
# only where one is expected or found, so the sets without tool episodes keep their tables.
TOOL_MODES: tuple[str, ...] = (
    FailureMode.malformed_tool_call.value,
    FailureMode.unknown_tool.value,
    FailureMode.invalid_arguments.value,
    FailureMode.tool_error.value,
    FailureMode.repeated_tool_call.value,
    FailureMode.no_tool_use.value,
    FailureMode.hallucinated_tool_output.value,
    FailureMode.overlong.value,
)
LABELLED_MODES: tuple[str, ...] = SCORED_MODES + TOOL_MODES

StepMode = tuple[int, str]


class LabelFileError(ValueError):
    """A label sidecar or its log is malformed; the message is ``file:line field: message``."""


class ExpectedLabel(BaseModel):
    """One step a human labelled with one failure mode."""

    model_config = ConfigDict(extra="forbid", strict=True)

    step: int = Field(ge=0)
    mode: str


class ExpectedEpisode(BaseModel):
    """The hand labels of one episode of a log file."""

    model_config = ConfigDict(extra="forbid", strict=True)

    log: str = Field(min_length=1)
    record: int = Field(ge=1)
    id: str = Field(min_length=1)
    shape: str = Field(min_length=1)
    labels: list[ExpectedLabel]
    note: str = ""


def load_expected(path: str | Path) -> list[ExpectedEpisode]:
    """The episodes of a label sidecar, validated strictly.

    Args:
        path: a JSONL sidecar, one ``ExpectedEpisode`` per line.

    Returns:
        The episodes in file order.

    Raises:
        LabelFileError: ``file:line field: message`` for invalid JSON, an unknown key, an
            unknown mode, a duplicate step label or a duplicate (log, record).

    Example:
        >>> episodes = load_expected("tests/labelers/heldout/labels.jsonl")
        >>> episodes[0].labels[0].mode
        'loop'
    """
    path = Path(path)
    episodes: list[ExpectedEpisode] = []
    seen: set[tuple[str, int]] = set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            episode = ExpectedEpisode.model_validate_json(line)
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first.get("loc", ())) or "record"
            raise LabelFileError(f"{path}:{number} {where}: {first.get('msg', 'invalid')}") from error
        for position, label in enumerate(episode.labels):
            if label.mode not in LABELLED_MODES:
                raise LabelFileError(
                    f"{path}:{number} labels.{position}.mode: unknown mode {label.mode!r}; "
                    f"known: {', '.join(LABELLED_MODES)}"
                )
        pairs = [(label.step, label.mode) for label in episode.labels]
        if len(pairs) != len(set(pairs)):
            raise LabelFileError(f"{path}:{number} labels: a (step, mode) pair is listed twice")
        key = (episode.log, episode.record)
        if key in seen:
            raise LabelFileError(f"{path}:{number} record: {episode.log} record {episode.record} is labelled twice")
        seen.add(key)
        episodes.append(episode)
    return episodes


def deployed_labelers() -> list[Labeler]:
    """The labelers ``prefbuild label`` runs when no recipe or ``--set`` is given (every default)."""
    return build_labelers(None, env=None)


def found_labels(trajectory: Trajectory, labelers: Iterable[Labeler]) -> set[StepMode]:
    """(step, mode) of every label the labelers put on ``trajectory``, through ``label_trajectory``."""
    labelled = label_trajectory(trajectory, labelers)
    return {(label.step, label.mode) for step in labelled.steps for label in step.labels}


@dataclass
class ModeScore:
    """Step-level counts of one failure mode."""

    tp: int = 0
    fp: int = 0
    fn: int = 0
    misses: list[str] = field(default_factory=list)

    @property
    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None

    @property
    def f1(self) -> float | None:
        p, r = self.precision, self.recall
        if p is None or r is None or p + r == 0:
            return None
        return 2 * p * r / (p + r)


def score(
    pairs: Iterable[tuple[str, set[StepMode], set[StepMode]]], modes: Iterable[str] = SCORED_MODES
) -> dict[str, ModeScore]:
    """Per-mode counts from (episode id, expected, found) triples; a match is the same step and mode.

    Args:
        pairs: for each episode its id, the expected (step, mode) set and the found one.
        modes: the modes to report (others found are ignored).

    Returns:
        A ``ModeScore`` per mode, with one line per episode where they differ.

    Example:
        >>> score([("e", {(1, "loop")}, {(1, "loop"), (2, "loop")})])["loop"].fp
        1
    """
    scores = {mode: ModeScore() for mode in modes}
    for episode_id, expected, found in pairs:
        for mode, counts in scores.items():
            wanted = {step for step, m in expected if m == mode}
            got = {step for step, m in found if m == mode}
            counts.tp += len(wanted & got)
            counts.fp += len(got - wanted)
            counts.fn += len(wanted - got)
            if wanted != got:
                counts.misses.append(f"{episode_id}: FP {sorted(got - wanted)} FN {sorted(wanted - got)}")
    return scores


def evaluate_sidecar(labels_path: str | Path, shapes: Iterable[str] | None = None) -> dict[str, dict[str, ModeScore]]:
    """Per shape and per mode scores of the deployed labelers on a labelled log set.

    Args:
        labels_path: the sidecar; each ``log`` is resolved next to it.
        shapes: only these shapes (all when None).

    Returns:
        ``{shape: {mode: ModeScore}}`` plus the key ``"all"`` over every shape.

    Example:
        >>> evaluate_sidecar("tests/labelers/heldout/labels.jsonl")["all"]["loop"].recall
    """
    labels_path = Path(labels_path)
    episodes = load_expected(labels_path)
    wanted_shapes = set(shapes) if shapes is not None else None
    by_log: dict[str, dict[int, ExpectedEpisode]] = defaultdict(dict)
    for episode in episodes:
        if wanted_shapes is None or episode.shape in wanted_shapes:
            by_log[episode.log][episode.record] = episode
    labelers = deployed_labelers()
    triples: dict[str, list[tuple[str, set[StepMode], set[StepMode]]]] = defaultdict(list)
    for log, records in by_log.items():
        log_path = labels_path.parent / log
        trajectories = list(read_trajectories(log_path))
        for record, episode in records.items():
            if record > len(trajectories):
                raise LabelFileError(f"{labels_path}: {log} has no record {record} (labelled episode {episode.id})")
            trajectory = trajectories[record - 1]
            expected = {(label.step, label.mode) for label in episode.labels}
            beyond = sorted(step for step, _ in expected if step >= len(trajectory.steps))
            if beyond:
                raise LabelFileError(
                    f"{labels_path}: episode {episode.id} labels steps {beyond}; "
                    f"{log}:{record} imports to {len(trajectory.steps)} steps"
                )
            triples[episode.shape].append((episode.id, expected, found_labels(trajectory, labelers)))
    modes = modes_of(item for items in triples.values() for item in items)
    result = {shape: score(items, modes) for shape, items in sorted(triples.items())}
    result["all"] = score((item for items in triples.values() for item in items), modes)
    return result


def modes_of(triples: Iterable[tuple[str, set[StepMode], set[StepMode]]]) -> tuple[str, ...]:
    """``SCORED_MODES`` plus every tool mode expected or found in ``triples``."""
    present = {mode for _, expected, found in triples for _, mode in expected | found}
    return SCORED_MODES + tuple(mode for mode in TOOL_MODES if mode in present)


def evaluate_trajectories(
    trajectories_path: str | Path, expected: dict[str, dict[str, list[int]]]
) -> dict[str, ModeScore]:
    """Scores of the deployed labelers on prefbuild trajectories with expected ``{id: {mode: [steps]}}``.

    Args:
        trajectories_path: a prefbuild trajectory JSONL (the development fixtures).
        expected: the hand labels per trajectory id.

    Returns:
        A ``ModeScore`` per mode.

    Example:
        >>> evaluate_trajectories("tests/labelers/fixtures/trajectories.jsonl", expected)["loop"].tp
    """
    labelers = deployed_labelers()
    triples = []
    for trajectory in read_trajectories(trajectories_path):
        wanted = {(step, mode) for mode, steps in expected.get(trajectory.id, {}).items() for step in steps}
        triples.append((trajectory.id, wanted, found_labels(trajectory, labelers)))
    return score(triples)


def _figure(value: float | None) -> str:
    return "   -" if value is None else f"{value:.2f}"


def format_table(title: str, scores: dict[str, ModeScore]) -> str:
    """A plain-text precision / recall / F1 table, one row per mode with its counts.

    Example:
        >>> print(format_table("held-out", scores))
    """
    rows = [title, f"{'mode':<22}{'P':>6}{'R':>6}{'F1':>6}{'TP':>5}{'FP':>5}{'FN':>5}"]
    for mode, counts in scores.items():
        if counts.tp + counts.fp + counts.fn == 0:
            continue
        rows.append(
            f"{mode:<22}{_figure(counts.precision):>6}{_figure(counts.recall):>6}{_figure(counts.f1):>6}"
            f"{counts.tp:>5}{counts.fp:>5}{counts.fn:>5}"
        )
    return "\n".join(rows)
