"""Premature success where the agent serves a person (tau2's customer, BFCL's user): a message that
says the work is done ("All set!", "your line is active again") in a conversation, or a BFCL turn,
that the env's grader failed on the work itself.

Replaces the generic ``premature_success`` on these envs, whose household and completion-action
readings do not apply to a conversation. Which part of the work failed comes from the grader:

* tau2: ``reward_info.reward_breakdown`` on the last step. Where only ``COMMUNICATE`` failed, the
  work the message claims was done and what it told the customer was wrong: that is
  ``tool_wrong_answer``'s (mode ``wrong_answer``), not a premature claim.
* BFCL: each turn's verdict (``Step.info["verdict"]`` on the step that ended the turn). A turn that
  failed BFCL's state or call checks while its closing message says the work is done is labelled;
  a turn that failed without such a message claims nothing (a question, a plain report). A turn
  BFCL leaves unscored (empty ground truth: a function or parameter withheld, to be asked about or
  declined) counts as failed where the model made calls in it anyway: what it then says it did was
  done with a substitute, a guessed parameter or a tool it was not offered.

A reply that only says something went wrong, asks, or hands the customer over claims nothing
(``service_claims.work_done_claim``). What a message said is the message of its action, as the env's
protocol read the turn (``said_text``: no reasoning blocks, no wrapper such as the slime pipeline's
``respond(content=...)``); in tau2 the last message is the one before the agent's own stop
(``###STOP###``, the slime pipeline's ``done()``), which tells the customer nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from prefbuild.labelers.base import Labeler
from prefbuild.labelers.service_claims import work_done_claim
from prefbuild.labelers.text import short
from prefbuild.records import FailureMode, Label, Step, Trajectory
from prefbuild.tooluse.actions import decode_action
from prefbuild.tooluse.slime import AGENT_STOP

# tau2's reward parts that judge the work done (its DB, env assertions, actions, NL assertions), as
# opposed to COMMUNICATE, which judges what the agent told the customer.
_TOLD = "COMMUNICATE"


def tau2_failed_parts(step: Step) -> set[str] | None:
    """The parts of tau2's reward that failed, from the verdict the env (or the importer) kept on the
    episode's last step; None where the step carries none.

    Args:
        step: the last step of a tau2 episode.

    Returns:
        Reward-basis names (``DB``, ``COMMUNICATE``, ``ENV_ASSERTION``, ``ACTION``, ``NL_ASSERTION``)
        whose part of the reward is below 1.

    Example:
        >>> from prefbuild.records import Step
        >>> info = {"tau2": {"reward_info": {"reward_breakdown": {"DB": 1.0, "COMMUNICATE": 0.0}}}}
        >>> tau2_failed_parts(Step(index=0, observation="", raw_output="", info=info))
        {'COMMUNICATE'}
    """
    verdict = step.info.get("tau2") if isinstance(step.info, Mapping) else None
    reward_info = verdict.get("reward_info") if isinstance(verdict, Mapping) else None
    if not isinstance(reward_info, Mapping):
        return None
    breakdown = reward_info.get("reward_breakdown")
    if isinstance(breakdown, Mapping) and breakdown:
        return {str(part) for part, value in breakdown.items() if isinstance(value, int | float) and value < 1}
    failed: set[str] = set()  # older tau2 results: read the checks themselves
    db_check = reward_info.get("db_check")
    if isinstance(db_check, Mapping) and db_check.get("db_match") is False:
        failed.add("DB")
    checks = reward_info.get("communicate_checks") or []
    if any(isinstance(check, Mapping) and check.get("met") is False for check in checks):
        failed.add(_TOLD)
    return failed or None


def is_message(step: Step) -> bool:
    """A turn that speaks to the person: no tool call made, and none attempted in a broken form."""
    return not step.tool_calls and step.format_ok and not step.facts.problems


def said_text(step: Step) -> str:
    """The words a message turn sent to the person: the message of its action as the env's protocol read
    the turn (the text without reasoning blocks, or the ``content`` of a slime ``respond(...)``); the raw
    text where the action holds none.

    Example:
        >>> from prefbuild.records import Step
        >>> turn = Step(index=0, observation="", raw_output="<think>x</think>Done.", action='{"message": "Done."}')
        >>> said_text(turn)
        'Done.'
    """
    if step.action is not None and not step.tool_calls:
        message = decode_action(step.action).message
        if message:
            return message
    return step.raw_output


def closing_message(steps: list[Step]) -> Step:
    """The step whose words end a conversation: the last one, or the one before where the last is the
    agent's own stop (tau2's ``###STOP###`` message, the slime pipeline's ``done()``), which says nothing.

    Example:
        >>> from prefbuild.records import Step, StepFacts
        >>> said = Step(index=0, observation="", raw_output="Done!", action='{"message": "Done!"}')
        >>> stop = Step(index=1, observation="", raw_output="done()", action='{"message": "###STOP###"}',
        ...             facts=StepFacts(final=True))
        >>> closing_message([said, stop]).index
        0
    """
    last = steps[-1]
    if len(steps) > 1 and last.facts.final and said_text(last).strip() == AGENT_STOP:
        return steps[-2]
    return last


class ServiceSuccessLabeler(Labeler):
    """Labels a message that tells the customer or user the work is done when the grader failed the work."""

    name: ClassVar[str] = "service_premature_success"
    mode: ClassVar[str] = FailureMode.premature_success.value
    # 2: said_text; the message before the agent's own stop; 3: a BFCL turn failed only by what an earlier one left;
    # 4: an unscored BFCL turn (no ground truth) in which the model made calls anyway; 5: 'commented', 'retweeted'
    version: ClassVar[int] = 5
    envs: ClassVar[tuple[str, ...]] = ("tau2", "bfcl")
    defaults: ClassVar[dict[str, Any]] = {"confidence": 0.85}

    def label(self, trajectory: Trajectory) -> list[Label]:
        steps = trajectory.steps
        if not steps or trajectory.outcome.success or trajectory.task.meta.get("outcome_known") is False:
            return []
        if trajectory.env.name == "bfcl":
            return self._failed_turns(steps)
        return self._failed_conversation(closing_message(steps), steps[-1])

    def _failed_conversation(self, told: Step, last: Step) -> list[Label]:
        """tau2: the last message ``told``, where it claims the work done and a part other than what it told
        failed (by the verdict on the ``last`` step)."""
        if not is_message(told):
            return []
        said = work_done_claim(said_text(told))
        if said is None:
            return []
        failed = tau2_failed_parts(last)
        if failed is not None and failed <= {_TOLD}:
            return []  # the work was done; what it told the customer failed (tool_wrong_answer)
        parts = f" ({', '.join(sorted(failed))} failed)" if failed else ""
        evidence = f"the last message says '{short(said, 60)}' but the grader failed the episode{parts}"
        return [self.make_label(told, self.config["confidence"], evidence)]

    def _failed_turns(self, steps: list[Step]) -> list[Label]:
        """BFCL: the closing message of each turn that failed BFCL's checks, where it claims the work done."""
        labels: list[Label] = []
        for step in steps:
            verdict = step.info.get("verdict") if isinstance(step.info, Mapping) else None
            if isinstance(verdict, Mapping):
                # a turn failed only by what an earlier turn left (``inherited``) did its own work; a turn BFCL
                # does not score (no ground truth: a function or parameter withheld) fails where the model
                # acted anyway (prefbuild's irrelevance verdict): the work could not be done as asked
                failed = verdict.get("valid") is False and not verdict.get("inherited")
                why = str(verdict.get("error_type") or "its checks")
            else:  # a record without per-turn verdicts: the last turn, by the episode's grade
                failed = step.index == len(steps) - 1 and step.facts.won is False
                why = "its checks"
            if not failed or not is_message(step):
                continue
            said = work_done_claim(said_text(step))
            if said is not None:
                evidence = f"the message says '{short(said, 60)}' but BFCL failed the turn ({short(why, 60)})"
                labels.append(self.make_label(step, self.config["confidence"], evidence))
        return labels
