"""Reading a recipe's YAML safely: libyaml when present, duplicate keys refused, anchors bounded.

A recipe is hand-written and may come from anywhere, so the reader refuses what PyYAML
accepts silently: a key given twice (the last one would win without a word), an alias that
refers to itself (a recursive structure that would never finish printing or hashing) and
anchors that expand to an enormous document ("billion laughs"). libyaml's C parser is used
when PyYAML was built with it, so a recipe with a 60 MB description loads in seconds.
"""

from __future__ import annotations

import sys
from typing import Any

import yaml

try:  # libyaml's C parser: an order of magnitude faster on big recipes
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover  # handled: PyYAML without libyaml: the Python parser reads the same YAML
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

from prefbuild.errors import LocatedError

MAX_EXPANDED_NODES = 200_000  # a recipe is a few hundred nodes; anchors may not blow it up past this
# A recipe nests a few levels; the walks over its data (line index, ${VAR} interpolation, pydantic)
# recurse once per level, so a deeper value (libyaml alone stops at 1000) must not reach them.
MAX_NESTING = 200
_INT_TAG = "tag:yaml.org,2002:int"


class YamlInputError(LocatedError):
    """A recipe file that is not acceptable YAML, at its line."""


def _line(node: yaml.Node) -> int:
    return node.start_mark.line + 1


def _check_graph(root: yaml.Node, source: str) -> None:
    """Refuse duplicate keys, recursive aliases, too long integers, and anchor expansions past
    ``MAX_EXPANDED_NODES`` nodes or ``MAX_NESTING`` levels."""
    sizes: dict[int, tuple[int, int]] = {}  # node id -> (nodes, levels) of its expansion
    on_path: set[int] = set()
    # Iterative depth-first walk (a deep document must not hit Python's recursion limit).
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            on_path.discard(key)
            sizes[key] = _expansion(node, sizes, source)
            continue
        if key in sizes:
            continue
        if key in on_path:
            raise YamlInputError(source, _line(node), "", "an alias refers to its own anchor (a recursive structure)")
        on_path.add(key)
        if _integer_too_long(node):
            raise YamlInputError(source, _line(node), "", f"an integer of more than {sys.get_int_max_str_digits()} "
                                 "digits")
        if isinstance(node, yaml.MappingNode):
            seen: dict[Any, int] = {}
            for key_node, _ in node.value:
                if isinstance(key_node, yaml.ScalarNode) and key_node.tag != "tag:yaml.org,2002:merge":
                    if key_node.value in seen:
                        raise YamlInputError(source, _line(key_node), str(key_node.value),
                                             f"duplicate key (also on line {seen[key_node.value]})")
                    seen[key_node.value] = _line(key_node)
        stack.append((node, True))
        for child in _children(node):
            child_key = id(child)
            if child_key in on_path:
                raise YamlInputError(source, _line(child), "",
                                     "an alias refers to its own anchor (a recursive structure)")
            if child_key not in sizes:
                stack.append((child, False))


def _expansion(node: yaml.Node, sizes: dict[int, tuple[int, int]], source: str) -> tuple[int, int]:
    """``(nodes, levels)`` of ``node`` with its aliases expanded, from its children's (in ``sizes``)."""
    measured = [sizes[id(child)] for child in _children(node)]
    nodes = 1 + sum(count for count, _ in measured)
    levels = 1 + max((depth for _, depth in measured), default=0)
    if nodes > MAX_EXPANDED_NODES:
        raise YamlInputError(source, _line(node), "", f"anchors and aliases expand to more than "
                             f"{MAX_EXPANDED_NODES} nodes; write the recipe out without them")
    if levels > MAX_NESTING:
        raise YamlInputError(source, _line(node), "", f"exceeded maximum nesting depth ({MAX_NESTING} levels)")
    return nodes, levels


def _integer_too_long(node: yaml.Node) -> bool:
    """A decimal integer longer than Python converts from text (``sys.get_int_max_str_digits()``).

    Example:
        >>> _integer_too_long(yaml.compose("9" * 5000)), _integer_too_long(yaml.compose("0x" + "f" * 5000))
        (True, False)
    """
    if not isinstance(node, yaml.ScalarNode) or node.tag != _INT_TAG:
        return False
    digits = node.value.lstrip("+-").replace("_", "")
    limit = sys.get_int_max_str_digits()
    # 0x, 0b and 0o integers and base-60 ones (1:30) are converted without that limit
    return 0 < limit < len(digits) and not digits.startswith("0") and ":" not in digits


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def parse_yaml(text: str, source: str) -> tuple[yaml.Node | None, Any]:
    """The composed node tree (for line numbers) and the plain data of one YAML document.

    Args:
        text: the YAML text.
        source: the file name, for error locations.

    Returns:
        ``(node, data)``; both ``None`` for an empty document.

    Raises:
        YamlInputError: invalid YAML, a duplicate key, a recursive alias or an anchor blow-up,
            located at its line.

    Example:
        >>> parse_yaml("a: 1\\nb: [2]\\n", "r.yaml")[1]
        {'a': 1, 'b': [2]}
        >>> parse_yaml("a: 1\\na: 2\\n", "r.yaml")
        Traceback (most recent call last):
        ...
        prefbuild.recipe_yaml.YamlInputError: r.yaml:2 a: duplicate key (also on line 1)
    """
    if "\x00" in text:
        raise YamlInputError(source, None, "", "not a text file (it holds NUL bytes)")
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, None
        _check_graph(node, source)
        return node, loader.construct_document(node)
    except RecursionError:  # PyYAML's Python parser (no libyaml) recurses once per level; libyaml stops at 1000
        raise YamlInputError(source, None, "", "invalid YAML: exceeded maximum nesting depth") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise YamlInputError(source, line, "", f"invalid YAML: {problem}") from None
    finally:
        loader.dispose()
