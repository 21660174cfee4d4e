"""External agent logs that prefbuild can label: AgentBench ``runs.jsonl`` and chat message lists."""

from prefbuild.labelers.external.agentbench import agentbench_trajectory, is_agentbench_record, source_name
from prefbuild.labelers.external.convert import ExternalLogError
from prefbuild.labelers.external.messages import is_messages_record, messages_trajectory

__all__ = [
    "ExternalLogError",
    "agentbench_trajectory",
    "is_agentbench_record",
    "is_messages_record",
    "messages_trajectory",
    "source_name",
]
