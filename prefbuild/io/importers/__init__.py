"""External agent logs that prefbuild can label: AgentBench ``runs.jsonl`` and chat message lists."""

from prefbuild.io.importers.agentbench import agentbench_trajectory, is_agentbench_record, source_name
from prefbuild.io.importers.convert import ExternalLogError
from prefbuild.io.importers.messages import is_messages_record, messages_trajectory

__all__ = [
    "ExternalLogError",
    "agentbench_trajectory",
    "is_agentbench_record",
    "is_messages_record",
    "messages_trajectory",
    "source_name",
]
