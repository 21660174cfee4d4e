"""Rollout: planning episodes, playing one, running many, and writing a run directory.

``plan`` (episodes, ids, shards) -> ``episode`` (one episode's loop) -> ``runner`` (many in
flight, files in plan order at close) -> ``generate`` (a run directory, resumable), with
``progress`` for the live counters and display.
"""

from prefbuild.rollout.episode import EpisodeRunner
from prefbuild.rollout.plan import Episode, Shard, episode_id, plan_episodes, planned_count
from prefbuild.rollout.runner import order_file, rollout

__all__ = [
    "Episode",
    "EpisodeRunner",
    "Shard",
    "episode_id",
    "order_file",
    "plan_episodes",
    "planned_count",
    "rollout",
]
