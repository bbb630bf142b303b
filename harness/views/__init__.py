"""Views: what a reader would rather see than read, as plain functions with thin widgets on top.

Each view is a pure function returning rows or HTML (unit-tested), plus a widget that only
re-renders that function's output when a control moves. Notebooks show the static HTML too,
so a notebook rendered without a kernel still shows the result.
"""
