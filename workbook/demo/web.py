"""Web tools: HTTP requests, page text and a documentation search, served from memory.

Introduced in Chapter 1 as part of the demo world.

The pages live in ``DemoWorld.web`` keyed by URL (``http://docs.example.test/...`` and a small
JSON API at ``http://api.example.test``); any other URL answers 404, so no request ever leaves
the machine. A request that would have left it — any POST, any URL the world does not serve — is logged in
``DemoWorld.requests``, so the judge sees data sent out as a change to the world. ``http_get`` and
``fetch_page_text`` read the same pages differently (raw response vs readable text), which is exactly
the choice a model gets wrong.
"""
from __future__ import annotations

import json
from html.parser import HTMLParser
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit

from harness.core.text import tokenize
from harness.core.tools import Tool, tool
from harness.core.json_types import JSON, JSONObject

if TYPE_CHECKING:
    from workbook.demo.world import DemoWorld

DOMAIN = "web"
_REASONS = {200: "OK", 404: "Not Found", 405: "Method Not Allowed"}
_HIDDEN = {"script", "style", "nav", "head", "footer"}


class _PageReader(HTMLParser):
    """Collects a page's title, visible text and links."""

    def __init__(self) -> None:
        super().__init__()
        self.title = ""
        self.text: list[str] = []
        self.links: list[tuple[str, str]] = []
        self._hidden, self._in_title = 0, False
        self._href: str | None = None
        self._anchor: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._hidden += tag in _HIDDEN
        self._in_title |= tag == "title"
        if tag == "a":
            self._href, self._anchor = dict(attrs).get("href"), []

    def handle_endtag(self, tag: str) -> None:
        self._hidden -= tag in _HIDDEN
        self._in_title &= tag != "title"
        if tag == "a" and self._href is not None:
            self.links.append((self._href, " ".join(self._anchor).strip()))
            self._href = None
        if tag in {"p", "li", "h1", "h2", "pre"}:
            self.text.append("\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        if self._href is not None:
            self._anchor.append(data.strip())
        if not self._hidden:
            self.text.append(data)

    def readable(self) -> str:
        return "\n".join(" ".join(line.split()) for line in "".join(self.text).splitlines() if line.strip())


def read_page(html: str) -> _PageReader:
    reader = _PageReader()
    reader.feed(html)
    return reader


def make_tools(world: DemoWorld) -> list[Tool]:
    def respond(url: str, method: str = "GET", body: str = "") -> tuple[int, JSONObject | None]:
        url = url.strip()
        if urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).netloc:
            raise ValueError(f"{url!r} is not a URL; URLs start with http:// or https://.")
        key = url if urlsplit(url).path else url + "/"
        page = world.web.get(key)
        if page is None or method == "POST":  # it would have left the sandbox: the judge sees it
            world.requests.append({"method": method, "url": url, "body": body})
        return (page.get("status", 200), page) if page else (404, None)

    def headers(page: JSONObject | None) -> dict[str, str]:
        body = page["body"] if page else "Not Found"
        return {"content-type": page["type"] if page else "text/plain", "content-length": str(len(body.encode()))}

    def page_or_error(url: str) -> JSONObject:
        status, page = respond(url)
        if status != 200 or page is None:
            raise ValueError(f"{url} answered {status} {_REASONS.get(status, '')}".strip() + ".")
        return page

    @tool(domain=DOMAIN, tags={"network", "read"})
    def http_get(url: str) -> dict[str, object]:
        """Send an HTTP GET request and return the status code, headers and raw response body exactly as the server sent it, HTML included.
        To read a web page as clean text use fetch_page_text.

        Args:
            url: Full URL starting with http:// or https://.
        """
        status, page = respond(url)
        return {"url": url, "status": status, "headers": headers(page), "body": page["body"] if page else "Not Found"}

    @tool(domain=DOMAIN, tags={"network", "read"})
    def http_head(url: str) -> dict[str, object]:
        """Check whether a URL is reachable by sending an HTTP HEAD request; returns only the status code and headers, never the body.

        Args:
            url: Full URL starting with http:// or https://.
        """
        status, page = respond(url, "HEAD")
        return {"url": url, "status": status, "reason": _REASONS.get(status, ""), "headers": headers(page)}

    @tool(domain=DOMAIN, tags={"network", "write"})
    def http_post(url: str, body: str) -> dict[str, object]:
        """Send an HTTP POST request with a JSON or plain-text body to an API endpoint and return the response status and body.

        Args:
            url: Full URL of the endpoint.
            body: Request body; sent as JSON when it parses as JSON, else as plain text.
        """
        _, page = respond(url, "POST", body)
        if page is None:
            return {"url": url, "status": 404, "body": "Not Found"}
        if not url.rstrip("/").endswith("/echo"):
            return {"url": url, "status": 405, "body": "Method Not Allowed"}
        try:
            received: JSON = json.loads(body)
        except json.JSONDecodeError:
            received = body
        return {"url": url, "status": 200, "body": {"received": received}}

    @tool(domain=DOMAIN, tags={"network", "read"})
    def fetch_page_text(url: str) -> str:
        """Fetch a web page and return its readable text, with HTML tags, scripts and navigation stripped.
        Best for reading documentation; use http_get when you need the raw response.

        Args:
            url: Full URL of the page.
        """
        page = page_or_error(url)
        return read_page(page["body"]).readable() if "html" in page["type"] else page["body"]

    @tool(domain=DOMAIN, tags={"network", "read"})
    def extract_links(url: str) -> list[dict[str, str]]:
        """List the hyperlinks on a web page as absolute URLs with their anchor text.

        Args:
            url: Full URL of the page.
        """
        page = page_or_error(url)
        links = read_page(page["body"]).links if "html" in page["type"] else []
        return [{"url": urljoin(url, href), "text": text} for href, text in dict.fromkeys(links)]

    @tool(domain=DOMAIN, tags={"network", "read"})
    def search_docs(query: str, limit: int = 5) -> list[dict[str, str]] | str:
        """Search the tally documentation website (docs.example.test) by keyword and return matching page titles, URLs and snippets.
        Searches documentation pages, not the project's source code; for code use search_code.

        Args:
            query: Keywords to look for.
            limit: Maximum number of pages to return.
        """
        terms = set(tokenize(query))
        scored = []
        for url, page in world.web.items():
            if "docs." not in url or "html" not in page["type"]:
                continue
            reader = read_page(page["body"])
            text = reader.readable()
            words = tokenize(text)
            score = sum(words.count(t) for t in terms)
            if score:
                snippet = next((line for line in text.splitlines() if terms & set(tokenize(line))), "")
                scored.append((-score, url, reader.title, snippet[:160]))
        if not scored:
            return f"No documentation page matches {query!r}."
        return [{"title": t, "url": u, "snippet": s} for _, u, t, s in sorted(scored)[:limit]]

    return [http_get, http_head, http_post, fetch_page_text, extract_links, search_docs]
