"""Query conditions (``cond=``): TileDB-Py's ``QueryCondition``. The library parses, types
and evaluates the text (``tdb_query_set_condition``); here only what is Python's own:
a dotted name (``attr.one``), which TileDB-Py reports with Python's ``ast.dump`` of it."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from ..errors import TdbfilterError as TileDBError


def check_python_syntax(expression: str) -> None:
    """Refuses a dotted name as TileDB-Py does (its message quotes Python's syntax tree);
    everything else is left to the library's parser."""
    try:
        tree = ast.parse(f"({expression})", mode="eval")
    except (SyntaxError, ValueError):
        return  # the library reports it ("Could not parse the given QueryCondition ...")
    for node in ast.walk(tree):  # breadth first: a comparison before its operands
        if isinstance(node, ast.Compare) and isinstance(node.ops[0], (ast.In, ast.NotIn)) \
                and not isinstance(node.left, (ast.Name, ast.Call)):
            raise TileDBError("TileDBError: cannot handle query condition left-hand side of "
                              f"type {type(node.left)}")
        if isinstance(node, ast.Attribute):
            raise TileDBError(
                f"TileDBError: Unhandled dot operator in {ast.dump(node)} -- if your "
                "attribute name has a dot in it, e.g. `orig.ident`, please wrap it with "
                '`attr("...")`, e.g. `attr("orig.ident")`')


@dataclass
class QueryCondition:
    """TileDB-Py's ``tiledb.QueryCondition(expression)``: a condition's text, checked when
    made (queries take the text itself: ``cond="a < 5"``)."""

    expression: str
    ctx: Any = None

    def __post_init__(self):
        if not isinstance(self.expression, str):
            raise TileDBError("QueryCondition expects its expression as a str")
        check_python_syntax(self.expression)
