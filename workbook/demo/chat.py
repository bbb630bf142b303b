"""Chat tools: team channels and direct messages, in memory.

Introduced in Chapter 1 as part of the demo world.

Channels are addressed as ``#name`` and people as ``@handle`` (the prefixes are optional), the
forms a user types and the offline stand-in model picks out of a request. Posting to a
channel and messaging one person are separate tools because sending to the wrong one is the
costliest mistake a chat agent makes.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from harness.core.text import tokenize
from harness.core.tools import Tool, tool

if TYPE_CHECKING:
    from workbook.demo.world import DemoWorld

DOMAIN = "chat"


def make_tools(world: DemoWorld) -> list[Tool]:
    def check_text(text: str) -> str:
        if not text.strip():
            raise ValueError("A message needs some text.")
        return text.strip()

    def render(messages: list[dict[str, str]], limit: int) -> list[str]:
        if limit < 1:
            raise ValueError("limit must be at least 1.")
        return [f"[{m['time']}] @{m['author']}: {m['text']}" for m in messages[-limit:]]

    @tool(domain=DOMAIN, tags={"network", "write"})
    def post_channel_message(channel: str, text: str) -> str:
        """Post a message to a team chat channel such as #dev, where every member can see it.
        To message one person privately use send_direct_message.

        Args:
            channel: Channel name, with or without '#'.
            text: The message to post.
        """
        c = world.channel(channel)
        c["messages"].append(world.chat_message(world.user, world.now(), check_text(text)))
        return f"Posted to #{channel.strip().lstrip('#').lower()} ({len(c['members'])} members)."

    @tool(domain=DOMAIN, tags={"network", "write"})
    def send_direct_message(recipient: str, text: str) -> str:
        """Send a private direct message to one teammate, identified by @handle; only they will see it.
        To address a whole channel use post_channel_message.

        Args:
            recipient: The teammate's handle, e.g. '@dana'.
            text: The message to send.
        """
        person = world.person(recipient)
        world.direct_messages.setdefault(person, []).append(world.chat_message(world.user, world.now(), check_text(text)))
        return f"Sent a direct message to @{person}."

    @tool(domain=DOMAIN, tags={"network", "read"})
    def read_channel_history(channel: str, limit: int = 20) -> list[str]:
        """Read the most recent messages posted in a chat channel, oldest first, with author and time.

        Args:
            channel: Channel name, with or without '#'.
            limit: Maximum number of messages to return.
        """
        return render(world.channel(channel)["messages"], limit) or [f"{channel} has no messages yet."]

    @tool(domain=DOMAIN, tags={"network", "read"})
    def read_direct_messages(person: str, limit: int = 20) -> list[str]:
        """Read your private conversation with one teammate, oldest message first.

        Args:
            person: The teammate's handle, e.g. '@bob'.
            limit: Maximum number of messages to return.
        """
        name = world.person(person)
        return render(world.direct_messages.get(name, []), limit) or [f"No direct messages with @{name} yet."]

    @tool(domain=DOMAIN, tags={"network", "read"})
    def list_channels() -> list[str]:
        """List the chat channels you belong to, with each channel's topic and member count."""
        return [f"#{n}: {c['topic']} ({len(c['members'])} members)" for n, c in world.channels.items()
                if world.user in c["members"]]

    @tool(domain=DOMAIN, tags={"network", "read"})
    def search_messages(query: str, channel: str | None = None) -> list[str]:
        """Search chat messages in all channels, or in one, for a keyword; returns matches with channel, author and time.

        Args:
            query: Keyword or phrase to look for.
            channel: Only search this channel.
        """
        names = [channel.strip().lstrip("#").lower()] if channel else list(world.channels)
        if channel:
            world.channel(channel)
        terms = set(tokenize(query))
        hits = [f"#{n} [{m['time']}] @{m['author']}: {m['text']}" for n in names for m in world.channels[n]["messages"]
                if query.lower() in m["text"].lower() or (terms and terms <= set(tokenize(m["text"])))]
        return hits or [f"No message mentions {query!r}."]

    return [post_channel_message, send_direct_message, read_channel_history, read_direct_messages,
            list_channels, search_messages]
