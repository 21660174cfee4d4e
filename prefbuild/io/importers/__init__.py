"""External agent logs that prefbuild can label: AgentBench ``runs.jsonl``, chat message lists
(household, DBBench and tool-calling agents), slime tau2 pipeline trajectories, tau2-bench results
files and BFCL multi-turn result files."""

from prefbuild.io.importers.agentbench import agentbench_trajectory, is_agentbench_record, source_name
from prefbuild.io.importers.convert import ExternalLogError
from prefbuild.io.importers.messages import is_messages_record, messages_trajectory
from prefbuild.io.importers.slime import slime_trajectory
from prefbuild.io.importers.slime_turns import is_slime_record
from prefbuild.io.importers.tau2 import is_tau2_results, tau2_trajectories
from prefbuild.io.importers.tool_chat import tool_chat_trajectory, tool_log_evidence

__all__ = [
    "ExternalLogError",
    "agentbench_trajectory",
    "is_agentbench_record",
    "is_messages_record",
    "is_slime_record",
    "is_tau2_results",
    "messages_trajectory",
    "slime_trajectory",
    "source_name",
    "tau2_trajectories",
    "tool_chat_trajectory",
    "tool_log_evidence",
]
