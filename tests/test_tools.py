from typing import Literal

import pytest

from harness.core.tools import Tool, parse_docstring, tool


def test_schema_from_hints_and_docstring():
    @tool(tags={"read"})
    def find_issues(query: str, state: Literal["open", "closed"] = "open", limit: int = 10, labels: list[str] | None = None) -> list:
        """Find issues matching a query.

        Longer explanation that stays in the description.

        Args:
            query: Words to match in titles.
            state: Which issues to include.
            limit: At most this many,
                counted after filtering.
        """
        return []

    s = find_issues.input_schema
    assert s["required"] == ["query"]
    assert s["properties"]["state"] == {"type": "string", "enum": ["open", "closed"], "description": "Which issues to include.", "default": "open"}
    assert s["properties"]["limit"]["description"] == "At most this many, counted after filtering."
    assert s["properties"]["labels"] == {"type": "array", "items": {"type": "string"}}
    assert find_issues.description.startswith("Find issues matching a query.\n\nLonger explanation")
    assert "Args" not in find_issues.description
    assert find_issues.summary == "Find issues matching a query."
    assert find_issues.to_api()["name"] == "find_issues"


def test_decorated_tool_still_runs_its_function():
    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers.

        Args:
            a: First.
            b: Second.
        """
        return a + b

    assert add.fn(a=2, b=3) == 5


@pytest.mark.parametrize("name", ["", "has space", "x" * 65, "dots.are.bad"])
def test_invalid_names_are_refused(name):
    with pytest.raises(ValueError, match="invalid"):
        Tool(name=name, description="d")


def test_missing_docstring_and_hint_are_clear_errors():
    with pytest.raises(ValueError, match="needs a docstring"):
        @tool
        def f(x: int) -> int:
            return x
    with pytest.raises(TypeError, match="needs a type hint"):
        @tool
        def g(x) -> int:
            """Do g."""
            return x


def test_unknown_tag_is_refused():
    with pytest.raises(ValueError, match="unknown tags"):
        Tool(name="t", description="d", tags=frozenset({"explosive"}))


def test_parse_docstring_without_args():
    assert parse_docstring("Just a description.") == ("Just a description.", {})
