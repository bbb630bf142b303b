"""Data tools: look into the sandbox's CSV files and do exact arithmetic.

Introduced in Chapter 1 as part of the demo world.

CSV files are also plain files, so ``preview_csv`` competes with ``read_file``; the data tools
earn their place by understanding columns. ``calculate`` parses the expression into a syntax
tree and evaluates only numbers and operators, with fractions, so 0.1 + 0.2 is 0.3 and no code
in the expression can ever run.
"""
from __future__ import annotations

import ast
import csv
import decimal
import io
import json
import operator
from decimal import Decimal
from fractions import Fraction
from statistics import mean
from typing import TYPE_CHECKING, Callable

from harness.core.tools import Tool, tool

if TYPE_CHECKING:
    from workbook.demo.world import DemoWorld

DOMAIN = "data"

_OPS: dict[type, Callable[..., Fraction]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
    ast.USub: operator.neg, ast.UAdd: operator.pos,
}


def evaluate(expression: str) -> Fraction:
    """The exact value of an arithmetic expression, or one error sentence saying what is not allowed."""
    def ev(node: ast.AST) -> Fraction:
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return Fraction(str(node.value))
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            left, right = ev(node.left), ev(node.right)
            if isinstance(node.op, ast.Pow) and (
                    right.denominator != 1 or abs(right) * max(left.numerator.bit_length(), left.denominator.bit_length()) > 100_000):
                raise ValueError("Powers must have a whole exponent and a result of at most about 30,000 digits.")
            if isinstance(node.op, (ast.Div, ast.FloorDiv, ast.Mod)) and right == 0:
                raise ValueError("The expression divides by zero.")
            return _OPS[type(node.op)](left, right)
        if isinstance(node, ast.UnaryOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](ev(node.operand))
        raise ValueError(f"Only numbers, + - * / // % ** and parentheses are allowed, not {ast.unparse(node)!r}.")

    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError:
        raise ValueError(f"{expression!r} is not a valid arithmetic expression.") from None
    return ev(tree.body)


def show_number(value: Fraction) -> str:
    """An exact decimal when one exists (26.25, 0.3), else 12 significant digits."""
    if value.denominator == 1:
        return str(value.numerator)
    d = value.denominator
    for p in (2, 5):
        while d % p == 0:
            d //= p
    if d != 1:
        return f"{float(value):.12g}"
    with decimal.localcontext() as context:  # localcontext(prec=...) needs Python 3.11
        context.prec = 100
        return format((Decimal(value.numerator) / Decimal(value.denominator)).normalize(), "f")


def make_tools(world: DemoWorld) -> list[Tool]:
    def rows(path: str) -> tuple[list[str], list[dict[str, str]]]:
        reader = csv.DictReader(io.StringIO(world.read(path)))
        data = list(reader)
        if not reader.fieldnames:
            raise ValueError(f"'{path}' has no header row, so it cannot be read as CSV.")
        return list(reader.fieldnames), data

    def column_of(header: list[str], column: str, path: str) -> str:
        if column not in header:
            raise ValueError(f"'{path}' has no column {column!r}; columns: {', '.join(header)}.")
        return column

    @tool(domain=DOMAIN, tags={"read"})
    def preview_csv(path: str, limit: int = 5) -> dict[str, object]:
        """Show the header and first rows of a CSV file in the workspace, with the total row count.

        Args:
            path: CSV file relative to the project root, e.g. 'data/sales.csv'.
            limit: Number of rows to show.
        """
        header, data = rows(path)
        return {"columns": header, "rows": [list(r.values()) for r in data[:limit]], "total_rows": len(data)}

    @tool(domain=DOMAIN, tags={"read"})
    def describe_csv_column(path: str, column: str) -> dict[str, object]:
        """Summarise one column of a CSV file: row count, missing values, distinct values and, for numeric columns, minimum, maximum, mean and sum.

        Args:
            path: CSV file relative to the project root.
            column: Name of the column, as in the header row.
        """
        header, data = rows(path)
        values = [r[column_of(header, column, path)] or "" for r in data]
        present = [v for v in values if v.strip()]
        out: dict[str, object] = {"column": column, "rows": len(values), "missing": len(values) - len(present),
                                  "distinct": len(set(present))}
        try:
            nums = [float(v) for v in present]
        except ValueError:
            out["most_common"] = max(set(present), key=present.count) if present else None
            return out
        if nums:
            out.update(min=min(nums), max=max(nums), mean=round(mean(nums), 4), sum=round(sum(nums), 4))
        return out

    @tool(domain=DOMAIN, tags={"read"})
    def filter_csv_rows(path: str, column: str, value: str, limit: int = 20) -> dict[str, object]:
        """Return the rows of a CSV file where a column equals a given value.

        Args:
            path: CSV file relative to the project root.
            column: Column to compare.
            value: Value the column must equal (compared as text, ignoring case).
            limit: Maximum number of rows to return.
        """
        header, data = rows(path)
        col = column_of(header, column, path)
        match = [r for r in data if (r[col] or "").strip().lower() == value.strip().lower()]
        return {"columns": header, "rows": [list(r.values()) for r in match[:limit]], "matches": len(match)}

    @tool(domain=DOMAIN, tags={"write"})
    def csv_to_json(path: str, destination: str) -> str:
        """Convert a CSV file into a JSON array of objects, one per row, and write it to a new file in the workspace.

        Args:
            path: CSV file to convert.
            destination: Path of the JSON file to create; it must not exist yet.
        """
        _, data = rows(path)
        target = world.resolve(destination)
        if target.exists():
            raise ValueError(f"'{destination}' already exists; choose another destination.")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        return f"Wrote {len(data)} rows from {path} to {world.rel(target)}."

    @tool(domain=DOMAIN, tags={"read"})
    def calculate(expression: str) -> str:
        """Evaluate an arithmetic expression such as '(17.5 * 3) / 2' exactly and return the result.
        Supports + - * / // % ** and parentheses; no variables or functions.

        Args:
            expression: The arithmetic expression.
        """
        return show_number(evaluate(expression))

    return [preview_csv, describe_csv_column, filter_csv_rows, csv_to_json, calculate]
