"""YAML read as plain data, with bounds: the one reader of YAML transcripts and of
`compaction.yaml`.

`yaml.safe_load` still builds `bytes` (`!!binary`), dates, sets, and lets a few aliases
expand into billions of nodes. Here every tag beyond the JSON types reads as the text,
list or mapping it is written as, aliases may add at most `MAX_ALIASED` nodes to what the
file writes out, nothing nests deeper than the JSON loaders allow, and a lone
surrogate reads as U+FFFD, as in JSON.
"""

from __future__ import annotations

from typing import Any

import yaml

from compaction_inspector.core.formats.common import MAX_DEPTH, without_surrogates

MAX_ALIASED = 100_000


class YAMLBoundError(yaml.YAMLError):
    """The document is valid YAML but past a bound; the message says which."""


class _Loader(yaml.SafeLoader):
    """SafeLoader whose tags beyond JSON's read as what they are written as."""


def _scalar(loader: _Loader, node: yaml.Node) -> Any:
    return loader.construct_scalar(node)  # type: ignore[arg-type]


def _sequence(loader: _Loader, node: yaml.Node) -> Any:
    if isinstance(node, yaml.MappingNode):  # !!set {a, b}: its members
        return [loader.construct_object(k) for k, _ in node.value]
    return loader.construct_sequence(node)  # type: ignore[arg-type]


for _tag in ("binary", "timestamp"):
    _Loader.add_constructor(f"tag:yaml.org,2002:{_tag}", _scalar)
for _tag in ("set", "omap", "pairs"):
    _Loader.add_constructor(f"tag:yaml.org,2002:{_tag}", _sequence)
# a bare date is text, as it is in JSON
_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return []


def _check(root: yaml.Node) -> None:
    """Raise YAMLBoundError when the document nests too deep, or its aliases would
    expand it past MAX_ALIASED more nodes than it writes. Each node is weighed once, so
    a bomb is found without expanding it."""
    size: dict[int, int] = {}
    depth: dict[int, int] = {}
    open_: set[int] = set()  # nodes whose children are still being weighed
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        if id(node) in size:
            continue
        children = _children(node)
        if not done:
            if id(node) in open_:
                raise YAMLBoundError("an alias refers to a node that holds it")
            open_.add(id(node))
            stack.append((node, True))
            stack.extend((c, False) for c in children if id(c) not in size)
            continue
        open_.discard(id(node))
        size[id(node)] = 1 + sum(size[id(c)] for c in children)
        depth[id(node)] = 1 + max((depth[id(c)] for c in children), default=0)
        if depth[id(node)] > MAX_DEPTH:
            raise YAMLBoundError(f"it nests deeper than {MAX_DEPTH} levels")
        if size[id(node)] - len(size) > MAX_ALIASED:
            raise YAMLBoundError(f"its aliases expand it by more than {MAX_ALIASED:,} nodes")


def load(text: str) -> Any:
    """The data of a YAML document. Raises yaml.YAMLError (YAMLBoundError past a bound)."""
    loader = _Loader(text)
    try:
        root = loader.get_single_node()
        if root is None:
            return None
        _check(root)
        return without_surrogates(loader.construct_document(root))
    except RecursionError as exc:
        raise YAMLBoundError(f"it nests deeper than {MAX_DEPTH} levels") from exc
    except ValueError as exc:  # an integer past Python's limit on digits
        raise YAMLBoundError(str(exc)) from exc
    finally:
        loader.dispose()
