"""External agent logs that prefbuild can label: AgentBench ``runs.jsonl``, chat message lists and
tau2-bench results files."""

from prefbuild.io.importers.agentbench import agentbench_trajectory, is_agentbench_record, source_name
from prefbuild.io.importers.convert import ExternalLogError
from prefbuild.io.importers.messages import is_messages_record, messages_trajectory
from prefbuild.io.importers.tau2 import is_tau2_results, tau2_trajectories

__all__ = [
    "ExternalLogError",
    "agentbench_trajectory",
    "is_agentbench_record",
    "is_messages_record",
    "is_tau2_results",
    "messages_trajectory",
    "source_name",
    "tau2_trajectories",
]
