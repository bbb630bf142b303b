"""Calendar tools: events, free slots and reminders on a fixed demo calendar.

Introduced in Chapter 1 as part of the demo world.

The world's "today" is fixed (:data:`workbook.demo.seed.TODAY`), so "what's on today" has one
answer on every run. Events block time and invite people; reminders only alert you: the
``create_event`` / ``create_reminder`` pair is a classic wrong pick.
"""
from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from workbook.demo.world import check_date, check_time
from harness.core.tools import Tool, tool
from harness.core.json_types import JSONObject

if TYPE_CHECKING:
    from workbook.demo.world import DemoWorld

DOMAIN = "calendar"
DAY_START, DAY_END = "09:00", "17:00"


def _minutes(hhmm: str) -> int:
    h, m = hhmm.split(":")
    return int(h) * 60 + int(m)


def _clock(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def make_tools(world: DemoWorld) -> list[Tool]:
    def find(event_id: int) -> JSONObject:
        if event_id not in world.events:
            raise ValueError(f"No event with id {event_id}; list_events shows the ids.")
        return world.events[event_id]

    def on(day: str) -> list[JSONObject]:
        return sorted((e for e in world.events.values() if e["date"] == day), key=lambda e: e["time"])

    def line(e: JSONObject) -> str:
        end = _clock(_minutes(e["time"]) + e["duration_minutes"])
        return f"{e['id']}: {e['date']} {e['time']}-{end} {e['title']} (with {', '.join('@' + a for a in e['attendees'])})"

    def clashes(day: str, time: str, duration: int, skip: int | None = None) -> list[str]:
        start = _minutes(time)
        return [e["title"] for e in on(day) if e["id"] != skip
                and start < _minutes(e["time"]) + e["duration_minutes"] and _minutes(e["time"]) < start + duration]

    @tool(domain=DOMAIN, tags={"network", "write"})
    def create_event(title: str, date: str, time: str, duration_minutes: int = 30,
                     attendees: list[str] | None = None) -> dict[str, object]:
        """Schedule a calendar event with a title, date, start time and duration, optionally inviting attendees.
        For an alert that blocks no time and invites nobody, use create_reminder.

        Args:
            title: What the event is, e.g. 'Sprint retro'.
            date: Day of the event, YYYY-MM-DD.
            time: Start time, HH:MM (24-hour).
            duration_minutes: Length of the event in minutes.
            attendees: Handles of the people to invite, e.g. ['@alice'].
        """
        if duration_minutes < 1:
            raise ValueError("duration_minutes must be at least 1.")
        day, start = check_date(date), check_time(time)
        people = [world.person(a) for a in attendees or []]
        overlap = clashes(day, start, duration_minutes)
        event_id = max(world.events, default=0) + 1
        world.events[event_id] = {"id": event_id, "title": title.strip(), "date": day, "time": start,
                                  "duration_minutes": duration_minutes, "attendees": [world.user, *people]}
        result: dict[str, object] = {"event_id": event_id, "scheduled": line(world.events[event_id])}
        if overlap:
            result["warning"] = f"overlaps {', '.join(overlap)}"
        return result

    @tool(domain=DOMAIN, tags={"write"})
    def create_reminder(text: str, date: str, time: str = "09:00") -> str:
        """Set a personal reminder that alerts you at a given date and time.
        A reminder blocks no time in the calendar and invites nobody.

        Args:
            text: What to remind you of.
            date: Day of the reminder, YYYY-MM-DD.
            time: Time of the alert, HH:MM (24-hour).
        """
        if not text.strip():
            raise ValueError("A reminder needs some text.")
        reminder_id = max(world.reminders, default=0) + 1
        world.reminders[reminder_id] = {"id": reminder_id, "text": text.strip(), "date": check_date(date),
                                        "time": check_time(time)}
        r = world.reminders[reminder_id]
        return f"Reminder {reminder_id} set for {r['date']} {r['time']}: {r['text']}"

    @tool(domain=DOMAIN, tags={"network", "read"})
    def list_events(date: str | None = None, days: int = 1) -> list[str]:
        """List calendar events for one day (today by default) or several days from a date, with times, titles and attendees.

        Args:
            date: First day to list, YYYY-MM-DD; today when omitted.
            days: Number of days to cover.
        """
        if days < 1:
            raise ValueError("days must be at least 1.")
        first = datetime.fromisoformat(check_date(date or world.today)).date()
        span = [(first + timedelta(days=n)).isoformat() for n in range(days)]
        found = [line(e) for day in span for e in on(day)]
        return found or [f"No events from {span[0]} to {span[-1]}."]

    @tool(domain=DOMAIN, tags={"network", "read"})
    def find_free_slot(date: str, duration_minutes: int = 30) -> str:
        """Find the first open slot of at least the given length on a day, between 09:00 and 17:00, avoiding existing events.

        Args:
            date: The day to look at, YYYY-MM-DD.
            duration_minutes: How long the slot must be, in minutes.
        """
        day = check_date(date)
        cursor = _minutes(DAY_START)
        for e in on(day) + [{"time": DAY_END, "duration_minutes": 0}]:
            if _minutes(e["time"]) - cursor >= duration_minutes:
                return f"{day} {_clock(cursor)}-{_clock(cursor + duration_minutes)} is free."
            cursor = max(cursor, _minutes(e["time"]) + e["duration_minutes"])
        return f"No free {duration_minutes}-minute slot on {day} between {DAY_START} and {DAY_END}."

    @tool(domain=DOMAIN, tags={"network", "destructive"})
    def cancel_event(event_id: int) -> str:
        """Cancel a calendar event and notify its attendees.

        Args:
            event_id: The event's id, as shown by list_events.
        """
        e = find(event_id)
        del world.events[event_id]
        others = [a for a in e["attendees"] if a != world.user]
        return f"Cancelled '{e['title']}' on {e['date']} {e['time']}; notified {', '.join('@' + a for a in others) or 'nobody'}."

    @tool(domain=DOMAIN, tags={"network", "write"})
    def reschedule_event(event_id: int, date: str, time: str) -> dict[str, object]:
        """Move an existing calendar event to a new date and start time, keeping its duration and attendees.

        Args:
            event_id: The event's id, as shown by list_events.
            date: New day, YYYY-MM-DD.
            time: New start time, HH:MM (24-hour).
        """
        e = find(event_id)
        day, start = check_date(date), check_time(time)
        overlap = clashes(day, start, e["duration_minutes"], skip=event_id)
        e.update(date=day, time=start)
        result: dict[str, object] = {"event_id": event_id, "scheduled": line(e)}
        if overlap:
            result["warning"] = f"overlaps {', '.join(overlap)}"
        return result

    @tool(domain=DOMAIN, tags={"read"})
    def list_reminders() -> list[str]:
        """List your pending reminders with their date and time."""
        pending = sorted(world.reminders.values(), key=lambda r: (r["date"], r["time"]))
        return [f"{r['id']}: {r['date']} {r['time']} {r['text']}" for r in pending] or ["No reminders set."]

    return [create_event, create_reminder, list_events, find_free_slot, cancel_event, reschedule_event, list_reminders]
