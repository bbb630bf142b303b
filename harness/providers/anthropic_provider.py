"""Claude behind the provider protocol: the same agent loop, on the real Anthropic Messages API.

Introduced in Chapter 0; every chapter uses it when an API key is present.

How it is built, and why:

* The official ``anthropic.AsyncAnthropic`` client sends the request, so what a chapter measures
  is what a user's own code would get. One client per event loop: an HTTP connection pool
  belongs to the loop that opened it, and notebooks and tests may run several loops.
* Retries are ours, not the SDK's (which we start with ``max_retries=0``): anthropic 2.12 obeys
  any ``retry-after`` however long it is. Here 429, 529, other 5xx and connection failures are
  retried with exponential backoff; a ``retry-after`` is honoured up to ``max_delay`` and a longer
  one ends the call at once, so the total wait is bounded by ``max_retries * max_delay``.
* Every failure the user must act on is a :class:`ProviderError` of one sentence, raised
  ``from None`` so no SDK traceback buries it. The key never appears in ``repr``, in an error
  or in a log line: ``repr`` shows at most its last four characters.
"""
from __future__ import annotations

import asyncio
import logging
import os
import random
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Mapping, Sequence, TypeVar
from urllib.parse import urlsplit

import anthropic

from harness.messages import Message, Transcript
from harness.providers.base import ModelTurn, ProviderError, Usage
from harness.providers.settings import setting
from harness.tools import Tool

log = logging.getLogger(__name__)
T = TypeVar("T")

DEFAULT_MODEL = "claude-haiku-4-5"
DEFAULT_BASE_URL = "https://api.anthropic.com"
_READABLE_BLOCKS = ("text", "tool_use")


@dataclass(frozen=True)
class Price:
    """USD per million tokens."""

    input_per_mtok: float
    output_per_mtok: float

    def cost(self, n_calls: int, input_tokens_per_call: int, output_tokens_per_call: int) -> float:
        if min(n_calls, input_tokens_per_call, output_tokens_per_call) < 0:
            raise ValueError(
                f"Call and token counts must be zero or more, got n_calls={n_calls}, "
                f"input_tokens_per_call={input_tokens_per_call}, output_tokens_per_call={output_tokens_per_call}."
            )
        per_call = input_tokens_per_call * self.input_per_mtok + output_tokens_per_call * self.output_per_mtok
        return n_calls * per_call / 1_000_000


#: Approximate list prices as of late 2025 (USD per million tokens), by model family; the first
#: key found in the model id wins, so the older, dearer Opus models come before the family row.
#: Edit this dict or pass ``prices=`` when prices change.
PRICES: dict[str, Price] = {
    "opus-4-1": Price(15.0, 75.0),
    "opus-4-0": Price(15.0, 75.0),
    "opus-4-2025": Price(15.0, 75.0),
    "opus": Price(5.0, 25.0),
    "sonnet": Price(3.0, 15.0),
    "haiku": Price(1.0, 5.0),
}


def price_for(model: str, prices: Mapping[str, Price] | None = None) -> Price:
    """The list price of ``model`` (works offline: chapters print a sweep's cost before running it)."""
    table = PRICES if prices is None else prices
    for family, price in table.items():
        if family in model:
            return price
    raise ValueError(f"No price is known for model {model!r}: pass prices={{{model!r}: Price(input_per_mtok, output_per_mtok)}}.")


def redact(key: str) -> str:
    """A key as it may be shown: its public prefix and at most its last four characters."""
    if len(key) < 20:
        return "***"
    prefix = "sk-ant-" if key.startswith("sk-ant-") else ""
    return f"{prefix}…{key[-4:]}"


def retry_kind(err: anthropic.AnthropicError) -> str | None:
    """Why a failed request is worth repeating ('rate_limit', 'overloaded', ...), or None when it is not."""
    if isinstance(err, anthropic.APITimeoutError):
        return "timeout"
    if isinstance(err, anthropic.APIConnectionError):
        return "connection"
    if not isinstance(err, anthropic.APIStatusError) or err.response.headers.get("x-should-retry") == "false":
        return None
    if err.status_code == 429:
        return "rate_limit"
    if err.status_code == 529 or err.type == "overloaded_error":
        return "overloaded"
    if err.status_code == 408 or err.status_code >= 500:
        return "server"
    return None


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
        max_delay: float = 30.0,
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
        self.base_url = (base_url or os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        self.host = urlsplit(self.base_url).netloc or self.base_url
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
        """Claude's next message for this conversation, with only ``tools`` on offer."""
        request = self._request(system, transcript, tools)
        response = await self.call(lambda client: client.messages.create(max_tokens=max_tokens, **request))
        blocks = [block.model_dump(mode="json", exclude_none=True) for block in response.content]
        unreadable = sorted({b["type"] for b in blocks} - set(_READABLE_BLOCKS))
        if unreadable:
            raise ProviderError(
                f"Claude replied with {', '.join(unreadable)} blocks, which the harness does not handle: it expects only text and tool_use."
            )
        message = Message.from_api({"role": "assistant", "content": blocks})
        usage = Usage(response.usage.input_tokens, response.usage.output_tokens)
        return ModelTurn(message, response.stop_reason or "", usage, response.model)

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

    def _request(self, system: str, transcript: Transcript, tools: Sequence[Tool]) -> dict[str, Any]:
        if not len(transcript):
            raise ValueError("The transcript is empty: add a user message before calling the model.")
        request: dict[str, Any] = {"model": self.model, "messages": transcript.to_api()}
        if system:
            request["system"] = system
        if tools:
            request["tools"] = [t.to_api() for t in tools]
        return request

    def _client_for_this_loop(self) -> anthropic.AsyncAnthropic:
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            self._client = anthropic.AsyncAnthropic(
                api_key=self._api_key, base_url=self.base_url, max_retries=0, timeout=self.timeout
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
            try:
                return await request(self._client_for_this_loop())
            except anthropic.AnthropicError as err:
                kind = retry_kind(err)
                asked = retry_after(err)
                if kind is None or attempt == attempts or (asked is not None and asked > self.max_delay):
                    raise ProviderError(self._scrub(self._describe(err, kind, attempt, waited, asked))) from None
                delay = asked if asked is not None else min(self.backoff * 2 ** (attempt - 1), self.max_delay)
                delay *= 1.0 if asked is not None else random.uniform(0.8, 1.0)  # jitter spreads out parallel retries
                log.info("Anthropic API %s; retrying in %.1f s (attempt %d of %d).", kind.replace("_", " "), delay, attempt + 1, attempts)
                await asyncio.sleep(delay)
                waited += delay
        raise AssertionError("unreachable: the loop returns or raises")

    def _describe(self, err: anthropic.AnthropicError, kind: str | None, attempts: int, waited: float, asked: float | None) -> str:
        """One sentence saying what went wrong and what to do about it."""
        tries = f"after {attempts} attempt{'s' if attempts > 1 else ''} over {waited:.1f} s"
        if isinstance(err, anthropic.AuthenticationError):
            return "The Anthropic API rejected the API key (401): check ANTHROPIC_API_KEY in your environment or .env."
        if kind == "rate_limit" and asked is not None and asked > self.max_delay:
            return f"The Anthropic API is rate-limiting this key (429) and asks to wait {asked:.0f} s, longer than max_delay={self.max_delay:g} s: try again later."
        if kind == "rate_limit":
            return f"The Anthropic API is still rate-limiting this key (429) {tries}: wait a minute or send fewer requests."
        if kind == "overloaded":
            return f"The Anthropic API is still overloaded (529) {tries}: try again in a few minutes."
        if kind == "connection":
            return f"Cannot reach the Anthropic API at {self.host}: is the network up?"
        if kind == "timeout":
            return f"The Anthropic API at {self.host} did not answer within {self.timeout:g} s ({tries}): try again or lower max_tokens."
        if isinstance(err, anthropic.APIStatusError):
            detail = (err.api_message or str(err.body or "no details")).strip().rstrip(".")
            if kind == "server":
                return f"The Anthropic API kept failing with a server error ({err.status_code}) {tries}: {detail}."
            if isinstance(err, anthropic.NotFoundError):
                return f"The Anthropic API found nothing at that address (404: {detail}): check ANTHROPIC_MODEL, now {self.model!r}."
            return f"The Anthropic API rejected the request ({err.status_code} {err.type or 'error'}): {detail}."
        return f"The Anthropic SDK failed with {type(err).__name__}: {str(err).strip().rstrip('.')}."

    def _scrub(self, text: str) -> str:
        return text.replace(self._api_key, redact(self._api_key))
