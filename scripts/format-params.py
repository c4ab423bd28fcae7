"""Rewrite params files in the layout DVC's own writer gives them, so that `dvc exp run -S
KEY=VALUE` changes one line and nothing else. Flow mappings the writer would re-wrap (wider
than 80 columns) become block mappings; values and comments are kept.

    python scripts/format-params.py params.yaml params.gpu.yaml params.train-long.yaml
"""

from __future__ import annotations

import json
import sys

import yaml
from dvc.utils.serialize._yaml import _get_yaml, parse_yaml_for_update
from ruamel.yaml.comments import CommentedMap, CommentedSeq

WIDTH = 80  # ruamel's line width, which DVC's writer keeps


def _plain(node):
    if isinstance(node, CommentedMap):
        return {str(k): _plain(v) for k, v in node.items()}
    if isinstance(node, CommentedSeq):
        return [_plain(v) for v in node]
    return json.loads(json.dumps(node))


def _flow_width(node) -> int:
    return len(yaml.safe_dump(_plain(node), default_flow_style=True, width=10**6,
                              sort_keys=False).strip())


def _block_wide_flows(node, indent: int = 0) -> None:
    pairs = node.items() if isinstance(node, CommentedMap) else enumerate(node)
    for key, value in list(pairs):
        if not isinstance(value, CommentedMap | CommentedSeq):
            continue
        head = indent + (len(str(key)) + 2 if isinstance(node, CommentedMap) else 2)
        if value.fa.flow_style() and head + _flow_width(value) > WIDTH:
            value.fa.set_block_style()
        _block_wide_flows(value, indent + 2)


def format_file(path: str) -> None:
    with open(path, encoding="utf-8") as f:
        data = parse_yaml_for_update(f.read(), path)
    _block_wide_flows(data)
    with open(path, "w", encoding="utf-8") as f:
        _get_yaml().dump(data, f)


if __name__ == "__main__":
    for name in sys.argv[1:]:
        format_file(name)
