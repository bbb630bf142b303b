"""The calendar MCP server: the demo team's events and reminders. Run: ``python -m workbook.servers.calendar``.

Introduced in Chapter 5 (MCP integration); the tools themselves are Chapter 1's
(:mod:`workbook.demo.calendar`), served by :func:`workbook.servers.serve.run_demo_server`.
"""
from workbook.demo import calendar
from workbook.servers.serve import run_demo_server

if __name__ == "__main__":
    run_demo_server("calendar", calendar.make_tools,
                    "The user's calendar on a fixed demo date: events with attendees, free slots and reminders.")
