"""The export-format contract: how records become the rows one trainer loads without changes.

An export format is a plug-in like an env or a labeler. Built-ins live next to this file
(``trl``, ``roundwise``, ``llamafactory``, ``swift``, ``sft``); a third-party package adds one
by subclassing ``ExportFormat`` and registering the class under the entry point group
``prefbuild.exports``. Every format, built-in or not, is found through ``get_format``, which
asks ``prefbuild.registry`` and nothing else, so the export command, the recipe check, the
dataset directory and the card treat plug-ins exactly like built-ins.

A pair a format cannot express (a multi-turn continuation in a single-turn format) raises
``ExportError`` naming the pair; ``to_rows`` counts it as skipped unless asked to be strict.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, ClassVar, Literal

from prefbuild import registry
from prefbuild.analysis.counters import Tally
from prefbuild.errors import PrefbuildError
from prefbuild.records import Message, Pair, Trajectory

Consumes = Literal["pairs", "trajectories"]
Record = Pair | Trajectory


class ExportError(PrefbuildError):
    """A pair or trajectory that the requested format cannot express; the message names it."""


class ExportFormat(ABC):
    """One dataset layout: its name, what it reads, and how one record becomes one row.

    Subclasses set ``name`` and ``consumes`` and implement ``row``. They may leave records
    out (``skip_reason``), add files next to the data (``sidecar_files``, e.g. LLaMA-Factory's
    ``dataset_info.json``) and tell the dataset card how to load and train on their rows
    (``loading_snippet``). Instances hold no state; ``get_format`` makes one per use. Register a
    plug-in in its package's ``pyproject.toml``::

        [project.entry-points."prefbuild.exports"]
        plain = "my_package.formats:PlainFormat"

    Attributes:
        name: the registered name; also the dataset config the rows are written as.
        consumes: ``"pairs"`` (``Pair`` records) or ``"trajectories"`` (``Trajectory`` records).
        summary: one line for help texts.

    Example:
        >>> class Plain(ExportFormat):
        ...     name = "plain"
        ...     consumes = "pairs"
        ...     def row(self, record):
        ...         return {"chosen": record.chosen[-1].content, "rejected": record.rejected[-1].content}
        >>> Plain().sidecar_files({"train": ["plain/train.jsonl"]})
        {}
    """

    name: ClassVar[str]
    consumes: ClassVar[Consumes] = "pairs"
    summary: ClassVar[str] = ""

    @abstractmethod
    def row(self, record: Any) -> dict[str, Any]:
        """The row for one record.

        Args:
            record: a ``Pair``, or a ``Trajectory`` when ``consumes == "trajectories"``.

        Returns:
            A plain dict (JSON and parquet ready); every row of a format has the same keys.

        Raises:
            ExportError: the record cannot be expressed in this format; the message names it.
        """

    def skip_reason(self, record: Any) -> str | None:
        """Why ``record`` is left out by design (``None``: it is exported). Default: never."""
        return None

    def sidecar_files(self, files: Mapping[str, Sequence[str]]) -> dict[str, str]:
        """Extra files to write at the top of the output directory, as ``name -> text``.

        Args:
            files: split -> data files of this format, relative to the output directory.

        Returns:
            File name -> content; the default is none.
        """
        return {}

    def loading_snippet(self, repo_id: str, config: str) -> str:
        """Markdown for the dataset card: how to load (and train on) this config.

        Args:
            repo_id: the Hub repo id (or the card's placeholder until publish knows it).
            config: the config name this format was written as.
        """
        return "\n".join([
            "```python",
            "from datasets import load_dataset",
            "",
            f'dataset = load_dataset("{repo_id}", "{config}")',
            "```",
        ])


def get_format(name: str) -> ExportFormat:
    """The export format registered as ``name`` (built-in or plug-in), ready to use.

    Args:
        name: a name from ``format_names()``, as a recipe's ``output.formats`` writes it.

    Returns:
        An ``ExportFormat`` instance.

    Raises:
        prefbuild.registry.UnknownPluginError: no format has that name; the message lists the known ones.
        ExportError: the registered object does not follow the ``ExportFormat`` contract.

    Example:
        >>> get_format("trl").consumes
        'pairs'
    """
    target = registry.load("exports", name)
    instance = target() if isinstance(target, type) else target
    if not callable(getattr(instance, "row", None)) or getattr(instance, "consumes", None) not in (
        "pairs",
        "trajectories",
    ):
        raise ExportError(
            f"export format {name!r} ({registry.targets('exports')[name]}) does not follow the ExportFormat "
            "contract: it needs a row(record) method and consumes = 'pairs' or 'trajectories'"
        )
    return instance  # type: ignore[no-any-return]


def format_names() -> list[str]:
    """Every registered export format name, built-ins first.

    Example:
        >>> format_names()[:2]
        ['trl', 'roundwise']
    """
    return registry.names("exports")


def to_rows(
    records: Iterable[Record],
    fmt: str | ExportFormat,
    *,
    skip_unsupported: bool = False,
    tally: Tally | None = None,
) -> Iterator[dict[str, Any]]:
    """Yield one row per record in format ``fmt``, streaming.

    Args:
        records: pairs, or trajectories for a format that consumes trajectories.
        fmt: a registered format name or an ``ExportFormat`` instance.
        skip_unsupported: count records the format cannot express (as
            ``<strategy>:unsupported_by_<format>``) instead of raising ``ExportError``.
        tally: counts kept and skipped records (with why); pass one to read them afterwards.

    Returns:
        An iterator of plain dicts (JSON / parquet ready).

    Example:
        >>> list(to_rows([], "trl"))
        []
    """
    export = get_format(fmt) if isinstance(fmt, str) else fmt
    tally = tally if tally is not None else Tally()
    expected = Pair if export.consumes == "pairs" else Trajectory
    for record in records:
        if not isinstance(record, expected):
            raise ExportError(
                f"the {export.name} format exports {export.consumes}, not {type(record).__name__.lower()}s "
                f"(record {getattr(record, 'id', '?')})"
            )
        reason = export.skip_reason(record)
        if reason is not None:
            tally.skip(reason)
            continue
        try:
            row = export.row(record)
        except ExportError:
            if not skip_unsupported:
                raise
            tally.skip(f"{getattr(record, 'strategy', 'record')}:unsupported_by_{export.name}")
            continue
        tally.keep()
        yield row


def message_dict(message: Message) -> dict[str, Any]:
    """A message as an OpenAI/TRL chat dict: ``role`` and ``content``, tool fields only when set.

    Example:
        >>> message_dict(Message(role="user", content="hi"))
        {'role': 'user', 'content': 'hi'}
    """
    row: dict[str, Any] = {"role": str(message.role), "content": message.content}
    if message.tool_calls:
        row["tool_calls"] = [call.model_dump(mode="json") for call in message.tool_calls]
    if message.tool_call_id is not None:
        row["tool_call_id"] = message.tool_call_id
    if message.name is not None:
        row["name"] = message.name
    return row


def reason_name(reason: Any) -> str | None:
    """A pair's failure mode as its plain name (works for enum members and registered strings)."""
    return None if reason is None else str(reason)


def single_turn(pair: Pair, fmt: str) -> tuple[Message, Message]:
    """``(chosen, rejected)`` of a pair with one assistant turn each; ``ExportError`` otherwise."""
    if len(pair.chosen) != 1 or len(pair.rejected) != 1:
        raise ExportError(
            f"pair {pair.id} (strategy {pair.strategy}) has a multi-turn continuation "
            f"({len(pair.chosen)} chosen / {len(pair.rejected)} rejected turns); the {fmt} format holds one "
            "assistant turn each: export it with --format trl, or build it with a per-step strategy"
        )
    return pair.chosen[0], pair.rejected[0]
