"""Claude behind the provider protocol: the same agent loop, on the real Anthropic Messages API.

Introduced in Chapter 0; every chapter uses it when an API key is present.

How it is built, and why:

* The official ``anthropic.AsyncAnthropic`` client sends the request, so what a chapter measures
  is what a user's own code would get. One client per event loop: an HTTP connection pool
  belongs to the loop that opened it, and notebooks and tests may run several loops.
* Retries are ours, not the SDK's (which we start with ``max_retries=0``), because the SDK obeys
  any ``retry-after`` however long. The policy follows the SDK's in *what* is retried — 408,
  409, 429, 5xx and 529, connection failures and timeouts, and whatever ``x-should-retry: true``
  marks (``false`` is obeyed too) — and differs in three ways: a 429 that reports a spend or
  usage limit is not retried (waiting does not lift it); a ``retry-after`` is honoured up to
  ``max_delay`` (60 s by default, so a 45 s wait is waited) and a longer one ends the call at
  once; and the total wait is bounded by ``max_retries * max_delay``.
* A response is checked before it is read: a 200 that is an HTML login page, cut-off JSON or
  ``{}`` (a proxy in the way) is a :class:`ProviderError`, not an ``AttributeError``.
* Thinking blocks are kept in the reply (the API wants them back before the tool calls they led
  to), and a model that thinks by default gets :data:`THINKING_HEADROOM` extra output tokens,
  because thinking counts against ``max_tokens``. ``stop_reason`` is passed on unchanged; the
  loop decides what each one means (see :func:`harness.providers.base.stop_outcome`).
* Every failure the user must act on is a :class:`ProviderError` of one sentence, raised
  outside the ``except`` block so no SDK traceback buries it and no SDK error (which holds the
  request, headers included) stays reachable from it. The key never appears in ``repr``, in an
  error or in a log line: ``repr`` shows at most its last four characters, and any piece of it
  eight characters or longer that an endpoint echoes is scrubbed (:mod:`harness.core.redaction`).
* A user name and password in ``ANTHROPIC_BASE_URL`` (a gateway's login) are taken out of the
  address and sent as HTTP Basic auth, as httpx would send them, so no URL that reaches an
  error, a log line or ``repr`` carries them; the key then travels in the API's ``x-api-key``
  header, since Basic auth takes ``Authorization``.
* A redirect to another origin is refused: a 307 or 308 would re-send the conversation and the
  key to an address nobody configured. Redirects within the origin are followed.
"""
from __future__ import annotations

import asyncio
import json
import logging
import os
import random
from typing import Any, Awaitable, Callable, Mapping, Sequence, TypeVar
from urllib.parse import urlsplit

import anthropic
import httpx2

from harness.core.messages import Message, Transcript
from harness.providers.base import ModelTurn, ProviderError, Usage
from harness.providers.models import DEFAULT_MODEL, PRICES, Price, model_info, price_for  # noqa: F401 (re-exported)
from harness.providers.settings import setting
from harness.core.redaction import redact_secrets, redact_url_credentials, url_credentials
from harness.core.tools import Tool
from harness.core.json_types import JSONObject

log = logging.getLogger(__name__)
T = TypeVar("T")

DEFAULT_BASE_URL = "https://api.anthropic.com"
#: Blocks ``complete`` passes on: what the loop reads, and the thinking it must send back.
_READABLE_BLOCKS = ("text", "tool_use", "thinking", "redacted_thinking")
#: Extra output tokens a model that thinks by default may spend before its answer: thinking
#: counts against max_tokens, so without this a 400-token answer budget is eaten by thought.
THINKING_HEADROOM = 8_000


def redact(key: str) -> str:
    """A key as it may be shown: its public prefix and at most its last four characters."""
    if len(key) < 20:
        return "***"
    prefix = "sk-ant-" if key.startswith("sk-ant-") else ""
    return f"{prefix}…{key[-4:]}"


_SPEND_LIMIT_WORDS = ("usage limit", "spend limit", "spending limit", "credit balance", "billing")


class CrossOriginRedirect(Exception):
    """The API answered with a redirect to another origin, which is not followed."""

    def __init__(self, status: int, origin: str) -> None:
        super().__init__(f"redirect ({status}) to {origin}")
        self.status, self.origin = status, origin


async def _refuse_cross_origin_redirects(response: httpx2.Response) -> None:
    """An httpx response hook: stop before a redirect to another origin is followed."""
    if response.has_redirect_location:
        target = response.request.url.join(response.headers["location"])
        if target.origin != response.request.url.origin:
            raise CrossOriginRedirect(response.status_code, _host(str(target)))


def _host(url: str) -> str:
    """host[:port] of a URL, without any user name or password."""
    parts = urlsplit(url)
    return (parts.hostname or url) + (f":{parts.port}" if parts.port else "")


def retry_kind(err: anthropic.AnthropicError) -> str | None:
    """Why a failed request is worth repeating ('rate_limit', 'overloaded', ...), or None when it is not."""
    if isinstance(err.__cause__, CrossOriginRedirect):
        return None
    if isinstance(err, anthropic.APITimeoutError):
        return "timeout"
    if isinstance(err, anthropic.APIConnectionError):
        return "connection"
    if not isinstance(err, anthropic.APIStatusError):
        return None
    should = err.response.headers.get("x-should-retry")
    if should == "false" or (err.status_code == 429 and _spend_limit(err)):
        return None
    if err.status_code == 429:
        return "rate_limit"
    if err.status_code == 529 or getattr(err, "type", None) == "overloaded_error":
        return "overloaded"
    if err.status_code in (408, 409) or err.status_code >= 500 or should == "true":
        return "server"
    return None


def _spend_limit(err: anthropic.APIStatusError) -> bool:
    """A 429 that reports a spend or usage limit: waiting a few seconds does not lift it."""
    text = f"{_api_message(err)} {err.body}".lower()
    return any(words in text for words in _SPEND_LIMIT_WORDS)


def _api_message(err: anthropic.APIStatusError) -> str:
    """The API's own message, read defensively (0.x-shaped errors and odd bodies lack fields)."""
    message = getattr(err, "api_message", None)
    if not isinstance(message, str):
        body = err.body if isinstance(err.body, dict) else {}
        inner: JSONObject = body["error"] if isinstance(body.get("error"), dict) else body
        message = inner.get("message") if isinstance(inner.get("message"), str) else None
    return (message or str(err.body or "no details")).strip().rstrip(".")


def retry_after(err: anthropic.AnthropicError) -> float | None:
    """Seconds the API asked us to wait (``retry-after-ms`` or ``retry-after``), if it said."""
    if not isinstance(err, anthropic.APIStatusError):
        return None
    headers = err.response.headers
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        try:
            return max(0.0, float(headers[name]) * scale)
        except (KeyError, ValueError):
            continue
    return None


def _tool_use_problem(block: JSONObject) -> str | None:
    """What makes a tool_use block unusable (no id, no name, an input that is not an object), or None."""
    if block.get("type") != "tool_use":
        return None
    for field_name in ("id", "name"):
        if not isinstance(block.get(field_name), str) or not block[field_name]:
            return f"it has no {field_name}"
    if not isinstance(block.get("input", {}), dict):
        return f"its input is a {type(block['input']).__name__}, not an object"
    return None


def _with_references(messages: list[JSONObject], tools: Sequence[Tool]) -> list[JSONObject]:
    """``messages`` with a ``tool_reference`` block for each found tool, in the tool result that found it (Anthropic's
    custom tool search: a normal ``tool_result`` naming tools that are sent with ``defer_loading``). Of several results
    in that message, the one whose text names the tool; else the first."""
    out = list(messages)
    for t in tools:
        at = (t.found_after or 0) - 1
        if not 0 <= at < len(out) or not isinstance(out[at].get("content"), list):
            continue
        blocks = list(out[at]["content"])
        results = [j for j, b in enumerate(blocks) if b.get("type") == "tool_result"]
        naming = [j for j in results if f'"{t.name}"' in json.dumps(blocks[j].get("content"))]
        for j in (naming or results)[:1]:
            content = blocks[j].get("content")
            content = content if isinstance(content, list) else [{"type": "text", "text": str(content)}]
            blocks[j] = {**blocks[j], "content": [*content, {"type": "tool_reference", "tool_name": t.name}]}
        out[at] = {**out[at], "content": blocks}
    return out


class AnthropicProvider:
    """Claude through the Anthropic Messages API; see the module docstring for the design."""

    def __init__(
        self,
        model: str | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        max_retries: int = 4,
        timeout: float = 60,
        *,
        backoff: float = 1.0,
        max_delay: float = 60.0,
    ) -> None:
        if max_retries < 0 or timeout <= 0 or backoff < 0 or max_delay < 0:
            raise ValueError(
                f"max_retries, backoff and max_delay must be zero or more and timeout positive, got "
                f"max_retries={max_retries}, timeout={timeout}, backoff={backoff}, max_delay={max_delay}."
            )
        key = (api_key or setting("ANTHROPIC_API_KEY")[0] or "").strip()
        if not key:
            raise ProviderError(
                "No Anthropic API key found: set ANTHROPIC_API_KEY in the environment or in .env at the repository root."
            )
        self._api_key = key
        self.model = model or setting("ANTHROPIC_MODEL")[0] or DEFAULT_MODEL
        self.name = self.model
        address = (base_url or os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL).strip().rstrip("/")
        self._login = url_credentials(address)  # [user, password]: sent as Basic auth, never shown
        self._endpoint = redact_url_credentials(address).replace("***@", "", 1) if self._login else address
        self.base_url = redact_url_credentials(address)  # what may be shown
        self.host = _host(self._endpoint)
        self.max_retries = max_retries
        self.timeout = timeout
        self.backoff = backoff
        self.max_delay = max_delay
        self._client: anthropic.AsyncAnthropic | None = None
        self._client_loop: asyncio.AbstractEventLoop | None = None

    def __repr__(self) -> str:
        return f"AnthropicProvider(model={self.model!r}, api_key='{redact(self._api_key)}', base_url={self.base_url!r})"

    # --- the provider protocol ------------------------------------------------------------

    async def complete(
        self, *, system: str, transcript: Transcript, tools: Sequence[Tool], max_tokens: int = 1024
    ) -> ModelTurn:
        """Claude's next message for this conversation, with only ``tools`` on offer (none: it must answer).

        ``max_tokens`` is the budget for the visible reply; a model that thinks by default gets
        :data:`THINKING_HEADROOM` more, since its thinking counts against the same limit.
        """
        request = self._request(system, transcript, tools)
        info = model_info(self.model)
        budget = max_tokens + (THINKING_HEADROOM if info is not None and info.thinks_by_default else 0)
        response = await self.call(lambda client: client.messages.create(max_tokens=budget, **request))
        return self._turn(response)

    def _turn(self, response: Any) -> ModelTurn:  # Any: the SDK's message object, parsed from the API's JSON
        """A checked response as a :class:`ModelTurn`; anything that is not a Messages API reply is a ProviderError."""
        content, usage = getattr(response, "content", None), getattr(response, "usage", None)
        if (not isinstance(response, anthropic.types.Message) or not isinstance(content, list)
                or not isinstance(getattr(usage, "input_tokens", None), int)
                or not isinstance(getattr(usage, "output_tokens", None), int)):
            raise ProviderError(self._not_a_reply(f"got {type(response).__name__} without content and usage"))
        blocks = [block.model_dump(mode="json", exclude_none=True, warnings=False) for block in content]
        unreadable = sorted({b.get("type", "?") for b in blocks} - set(_READABLE_BLOCKS))
        if unreadable:
            raise ProviderError(
                f"Claude replied with {', '.join(unreadable)} blocks, which the harness does not handle: "
                "it reads text and tool_use and keeps thinking blocks."
            )
        for block in blocks:
            problem = _tool_use_problem(block)
            if problem:
                raise ProviderError(self._scrub(
                    f"Claude replied with a tool_use block the harness cannot run ({problem}): the API promises an id, "
                    f"a name and an object input, so check ANTHROPIC_BASE_URL and any proxy in between."))
        message = Message.from_api({"role": "assistant", "content": blocks})
        counted = Usage.from_api(usage)
        return ModelTurn(message, response.stop_reason or "", counted, response.model or "")

    def _not_a_reply(self, what: str) -> str:
        return (f"The Anthropic API at {self.host} answered with something that is not a Messages API response "
                f"({what}): check ANTHROPIC_BASE_URL and any proxy in between.")

    async def count_tokens(self, system: str, transcript: Transcript, tools: Sequence[Tool]) -> int:
        """Claude's own count of the input tokens this request would use (tiktoken's is only an estimate of it)."""
        request = self._request(system, transcript, tools)
        counted = await self.call(lambda client: client.messages.count_tokens(**request))
        return counted.input_tokens

    def estimate_cost(
        self,
        n_calls: int,
        input_tokens_per_call: int,
        output_tokens_per_call: int,
        prices: Mapping[str, Price] | None = None,
    ) -> float:
        """Approximate USD cost of ``n_calls`` calls to this model at list prices (see :data:`PRICES`)."""
        return price_for(self.model, prices).cost(n_calls, input_tokens_per_call, output_tokens_per_call)

    async def aclose(self) -> None:
        """Close the HTTP connections of the current client (a new one opens on the next call)."""
        if self._client is not None:
            await self._client.close()
            self._client = self._client_loop = None

    # --- internals ----------------------------------------------------------------------------

    def _request(self, system: str, transcript: Transcript, tools: Sequence[Tool]) -> JSONObject:
        if not len(transcript):
            raise ValueError("The transcript is empty: add a user message before calling the model.")
        request: JSONObject = {"model": self.model, "messages": _with_references(transcript.to_api(), tools)}
        if system:
            request["system"] = system
        if tools:
            # A tool a search found is sent deferred and named by a tool_reference in the result that found it: the
            # API expands its definition there, so the tools block — the start of the cached prefix — never changes.
            request["tools"] = [t.to_api() | ({"defer_loading": True} if t.found_after is not None else {}) for t in tools]
        elif called := list(dict.fromkeys(c.name for c in transcript.tool_calls())):
            # No tools on offer, but the API refuses tool blocks in a request that defines none: the tools the
            # conversation called are named, bare, and none may be used (how the loop guard asks for an answer).
            request["tools"] = [{"name": n, "description": "", "input_schema": {"type": "object"}} for n in called]
            request["tool_choice"] = {"type": "none"}
        return request

    def _client_for_this_loop(self) -> anthropic.AsyncAnthropic:
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            login = httpx2.BasicAuth(*self._login) if len(self._login) == 2 else None
            http = anthropic.DefaultAsyncHttpxClient(
                auth=login, event_hooks={"response": [_refuse_cross_origin_redirects]})
            self._client = anthropic.AsyncAnthropic(
                api_key=self._api_key, base_url=self._endpoint, max_retries=0, timeout=self.timeout, http_client=http,
                default_headers={"x-api-key": self._api_key} if login else None,  # Basic auth takes Authorization
            )
            self._client_loop = loop
        return self._client

    async def call(self, request: Callable[[anthropic.AsyncAnthropic], Awaitable[T]]) -> T:
        """Run ``request(client)`` with this provider's retries, backoff and one-sentence errors.

        Public so that other API paths (Chapter 5's server-side tool search) share them.
        """
        waited = 0.0
        attempts = self.max_retries + 1
        for attempt in range(1, attempts + 1):
            failure = None  # raised after the except block, so the SDK error is not its __context__
            try:
                return await request(self._client_for_this_loop())
            except (ValueError, TypeError) as err:  # a 200 whose body is not JSON, or not the API's JSON
                failure = self._not_a_reply(f"{type(err).__name__}: {(str(err).splitlines() or [''])[0][:80]}")
            except anthropic.AnthropicError as err:
                kind = retry_kind(err)
                asked = retry_after(err)
                if kind is None or attempt == attempts or (asked is not None and asked > self.max_delay):
                    failure = self._describe(err, kind, attempt, waited, asked)
                else:
                    delay = self._delay(attempt, asked)
                    log.info("Anthropic API %s; retrying in %.1f s (attempt %d of %d).",
                             kind.replace("_", " "), delay, attempt + 1, attempts)
            if failure is not None:
                raise ProviderError(self._scrub(failure))
            await asyncio.sleep(delay)
            waited += delay
        raise AssertionError("unreachable: the loop returns or raises")

    def _delay(self, attempt: int, asked: float | None) -> float:
        """Seconds to wait before retry number ``attempt``: what the API asked, else jittered exponential backoff."""
        if asked is not None:
            return asked
        return min(self.backoff * 2 ** (attempt - 1), self.max_delay) * random.uniform(0.8, 1.0)  # jitter spreads out parallel retries

    def _describe(self, err: anthropic.AnthropicError, kind: str | None, attempts: int, waited: float, asked: float | None) -> str:
        """One sentence saying what went wrong and what to do about it."""
        tries = f"after {attempts} attempt{'s' if attempts > 1 else ''} over {waited:.1f} s"
        if isinstance(err, anthropic.AuthenticationError):
            return "The Anthropic API rejected the API key (401): check ANTHROPIC_API_KEY in your environment or .env."
        if isinstance(err, anthropic.APIStatusError) and err.status_code == 429 and kind is None and _spend_limit(err):
            return f"The Anthropic API refused the request (429): {_api_message(err)}; raise the limit in the Console, retrying will not help."
        if kind == "rate_limit" and asked is not None and asked > self.max_delay:
            return f"The Anthropic API is rate-limiting this key (429) and asks to wait {asked:.0f} s, longer than max_delay={self.max_delay:g} s: try again later."
        if kind == "rate_limit":
            return f"The Anthropic API is still rate-limiting this key (429) {tries}: wait a minute or send fewer requests."
        if kind == "overloaded":
            return f"The Anthropic API is still overloaded (529) {tries}: try again in a few minutes."
        if isinstance(err.__cause__, CrossOriginRedirect):
            moved = err.__cause__
            return (f"The Anthropic API at {self.host} redirected ({moved.status}) to another origin, {moved.origin}, which "
                    "was refused so the key and the conversation are not sent there: set ANTHROPIC_BASE_URL to the address you trust.")
        if kind == "connection":
            return f"Cannot reach the Anthropic API at {self.host}: is the network up?"
        if kind == "timeout":
            return f"The Anthropic API at {self.host} did not answer within {self.timeout:g} s ({tries}): try again or lower max_tokens."
        if isinstance(err, anthropic.APIStatusError):
            detail = _api_message(err)
            if kind == "server":
                return f"The Anthropic API kept failing with a server error ({err.status_code}) {tries}: {detail}."
            if isinstance(err, anthropic.NotFoundError):
                return f"The Anthropic API found nothing at that address (404: {detail}): check ANTHROPIC_MODEL, now {self.model!r}."
            return f"The Anthropic API rejected the request ({err.status_code} {getattr(err, 'type', None) or 'error'}): {detail}."
        return f"The Anthropic SDK failed with {type(err).__name__}: {str(err).strip().rstrip('.')}."

    def _scrub(self, text: str) -> str:
        """``text`` with the key shown as :func:`redact` shows it, and any other piece of it or of the URL's password hidden."""
        shown = redact_url_credentials(text.replace(self._api_key, redact(self._api_key)))
        return redact_secrets(shown, [self._api_key, *self._login[1:]])  # the password, not the user name
