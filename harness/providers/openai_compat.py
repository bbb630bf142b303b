"""Any model behind an OpenAI-compatible chat endpoint: Ollama, LM Studio, vLLM, llama.cpp's ``llama-server``,
OpenAI itself and the hosts that copy its API — the same agent loop, on the model a reader has.

Introduced in Chapter 5c (the loop on a real model) and used by ``harness measure``, which runs the page's
measurements on such a model.

How it is built, and why:

* Settings as for Claude (:mod:`harness.providers.settings`): ``OPENAI_BASE_URL`` (the server's address,
  usually ending in ``/v1``; OpenAI's own when unset), ``OPENAI_MODEL`` (the model's name as the server
  lists it; required, since no name is right on every server) and ``OPENAI_API_KEY`` (optional: local
  servers take none) — from the environment, else from ``.env``. The key is never shown: ``repr`` says
  only whether one is set, and any piece of it a server echoes is scrubbed from errors.
* The official ``openai`` SDK sends the request. It is light here: every package it needs the anthropic SDK
  needs too, so the optional extra adds one wheel; and it is what a user's own code would call. Its own
  retries are kept (408, 409, 429 and 5xx, connection failures and timeouts, ``retry-after`` obeyed up to
  two minutes), since unlike the anthropic SDK's they are bounded. A redirect is not followed: it would send
  the conversation and the key to an address nobody configured.
* Standard ``tools`` and ``tool_calls``. A tool a search found is not added to ``tools``: its definition
  follows the search result that found it (:mod:`harness.providers.chat_format`), where the page puts it,
  so the prefix a server has cached survives the search. A server that constrains calls to the declared
  tools cannot return a structured call to it, so the model writes the call, and the next point reads it.
* A call a small model writes as text — bare or fenced JSON, or its template's ``<tool_call>`` tag that the
  server did not parse — is read as that call (:mod:`harness.providers.text_calls`; ``read_text_calls``,
  on by default), as the workbook's local provider does.
* A response is checked before it is read: an HTML page, an empty body, ``null`` or ``{}`` where a chat
  completion belongs (a wrong address, a proxy's login page) is a :class:`ProviderError` of one sentence,
  as is every failure the user must act on, raised outside the ``except`` block so no SDK error (which
  holds the request, headers included) stays reachable from it.
"""
from __future__ import annotations

import asyncio
import json
from typing import Any, Awaitable, Callable, Sequence
from urllib.parse import urlsplit

try:
    import openai
    from openai.types.chat import ChatCompletion
except ImportError:  # an optional extra: say how to get it, in one sentence
    raise ImportError("The OpenAI-compatible provider needs the openai SDK: pip install 'tool-selection-workbook[openai]' "
                      "(or pip install 'openai>=3.63,<4').") from None

from harness.core.json_types import JSONObject
from harness.core.messages import Block, Message, TextBlock, ToolCall, Transcript
from harness.core.redaction import redact_secrets, redact_url_credentials, url_credentials
from harness.core.safe_text import printable
from harness.core.tools import Tool
from harness.providers.base import ModelTurn, ProviderError, Usage
from harness.providers.chat_format import chat_messages, tool_spec
from harness.providers.settings import setting
from harness.providers.text_calls import call_in_text

#: Where requests go when ``OPENAI_BASE_URL`` is unset: OpenAI's API, as in the SDK.
DEFAULT_BASE_URL = "https://api.openai.com/v1"
#: The settings the provider reads (the environment first, then ``.env``).
URL_SETTING, MODEL_SETTING, KEY_SETTING = "OPENAI_BASE_URL", "OPENAI_MODEL", "OPENAI_API_KEY"
#: Why a chat completion stopped, in the loop's words (the Messages API's stop reasons).
STOPS = {"stop": "end_turn", "tool_calls": "tool_use", "function_call": "tool_use", "length": "max_tokens",
         "content_filter": "refusal"}


async def _no_key() -> str:
    """The key of a server that takes none: empty, and the header omitted per request (the SDK's own way to send
    no ``Authorization``), rather than a made-up key."""
    return ""


class OpenAICompatProvider:
    """A model behind ``/v1/chat/completions``; see the module docstring for the design.

    ``max_tokens`` caps every reply whatever the loop asks (a small model's never-ending answer costs the
    whole budget on a slow machine); ``temperature`` is sent only when given (0 for greedy runs that can be
    compared); ``timeout`` is seconds per attempt, ``max_retries`` the SDK's retries after the first.
    """

    def __init__(self, model: str | None = None, base_url: str | None = None, api_key: str | None = None, *,
                 timeout: float = 600.0, max_retries: int = 2, max_tokens: int | None = None,
                 temperature: float | None = None, read_text_calls: bool = True) -> None:
        if timeout <= 0 or max_retries < 0 or (max_tokens is not None and max_tokens <= 0):
            raise ValueError(f"timeout and max_tokens must be positive and max_retries zero or more, got timeout={timeout}, "
                             f"max_tokens={max_tokens}, max_retries={max_retries}.")
        address = (base_url or setting(URL_SETTING)[0] or DEFAULT_BASE_URL).strip().rstrip("/")
        shown = redact_url_credentials(address)
        parts = urlsplit(address)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ProviderError(f"{URL_SETTING} must be an http(s) address such as http://127.0.0.1:8080/v1, got {shown!r}.")
        if url_credentials(address):
            raise ProviderError(f"{URL_SETTING} holds a user name or password ({shown}), which this provider does not "
                                f"send: remove it and put the secret in {KEY_SETTING}.")
        self._api_key = (api_key or setting(KEY_SETTING)[0] or "").strip()
        if not self._api_key and address == DEFAULT_BASE_URL:
            raise ProviderError(f"No OpenAI API key found: set {KEY_SETTING} in the environment or .env, or set "
                                f"{URL_SETTING} to your own server (Ollama, LM Studio, vLLM, llama-server).")
        self.model = (model or setting(MODEL_SETTING)[0] or "").strip()
        if not self.model:
            raise ProviderError(f"No model named: set {MODEL_SETTING} in the environment or .env (the name the server "
                                "lists at /v1/models), or pass model=.")
        self.name = self.model
        self.base_url = address
        self.host = parts.netloc
        self.timeout, self.max_retries = timeout, max_retries
        self.max_tokens, self.temperature, self.read_text_calls = max_tokens, temperature, read_text_calls
        self._limit_field = "max_tokens"  # becomes max_completion_tokens for a model that refuses the older name
        self._client: openai.AsyncOpenAI | None = None
        self._client_loop: asyncio.AbstractEventLoop | None = None

    def __repr__(self) -> str:
        key = "set" if self._api_key else "none"
        return f"OpenAICompatProvider(model={self.model!r}, base_url={self.base_url!r}, api_key={key})"

    # --- the provider protocol ------------------------------------------------------------

    async def complete(self, *, system: str, transcript: Transcript, tools: Sequence[Tool],
                       max_tokens: int = 1024) -> ModelTurn:
        """The model's next message for this conversation, with ``tools`` on offer (a found tool's definition
        follows the result that found it, see the module)."""
        if not len(transcript):
            raise ValueError("The transcript is empty: add a user message before calling the model.")
        found = [t for t in tools if t.found_after is not None]
        request: JSONObject = {"model": self.model, "messages": chat_messages(system, transcript, found)}
        if declared := [tool_spec(t) for t in tools if t.found_after is None]:
            request["tools"] = declared
        if self.temperature is not None:
            request["temperature"] = self.temperature
        budget = min(max_tokens, self.max_tokens or max_tokens)
        return self._turn(await self._create(request, budget), transcript, offered=bool(tools))

    async def aclose(self) -> None:
        """Close the HTTP connections of the current client (a new one opens on the next call)."""
        if self._client is not None:
            await self._client.close()
            self._client = self._client_loop = None

    # --- internals ----------------------------------------------------------------------------

    def _client_for_this_loop(self) -> openai.AsyncOpenAI:
        """One client per event loop: an HTTP connection pool belongs to the loop that opened it."""
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            self._client = openai.AsyncOpenAI(
                api_key=self._api_key or _no_key, base_url=self.base_url, timeout=self.timeout,
                max_retries=self.max_retries, http_client=openai.DefaultAsyncHttpxClient(follow_redirects=False))
            self._client_loop = loop
        return self._client

    async def _create(self, request: JSONObject, budget: int) -> Any:  # Any: the SDK's parsed reply, checked by _turn
        """POST the request (again with ``max_completion_tokens`` if the model refuses ``max_tokens``)."""
        while True:
            failure = None  # raised after the except block, so the SDK error is not its __context__
            try:
                client = self._client_for_this_loop()
                create: Callable[..., Awaitable[Any]] = client.chat.completions.create  # Any: options given as a dict
                unsigned = {} if self._api_key else {"extra_headers": {"Authorization": openai.omit}}
                return await create(**request, **{self._limit_field: budget}, **unsigned)
            except (ValueError, TypeError) as err:  # a 200 whose body is not JSON
                failure = self._not_a_reply(f"{type(err).__name__}: {(str(err).splitlines() or [''])[0][:80]}")
            except openai.BadRequestError as err:
                if self._limit_field == "max_tokens" and "max_completion_tokens" in _detail(err):
                    self._limit_field = "max_completion_tokens"
                    continue
                failure = self._describe(err)
            except openai.OpenAIError as err:
                failure = self._describe(err)
            raise ProviderError(self._scrub(failure))

    def _turn(self, response: Any, transcript: Transcript, offered: bool) -> ModelTurn:  # Any: the SDK's reply
        """A checked reply as a :class:`ModelTurn`; anything that is not a chat completion is a ProviderError."""
        choices = getattr(response, "choices", None)
        choice = choices[0] if isinstance(choices, list) and choices else None
        message = getattr(choice, "message", None)
        if not isinstance(response, ChatCompletion) or message is None:
            what = f"{len(response)} characters of text" if isinstance(response, str) else f"{type(response).__name__} without choices"
            raise ProviderError(self._not_a_reply(what))
        text = (message.content or "").strip() if isinstance(message.content, str) else ""
        calls: list[Block] = []
        for n, call in enumerate(message.tool_calls or [], 1):
            function = getattr(call, "function", None)
            name = getattr(function, "name", None)
            if not isinstance(name, str) or not name.strip():
                raise ProviderError(self._scrub(f"The model at {self.host} made a tool call without a name, which the harness "
                                                "cannot run: check the server's tool-call parser (llama-server needs --jinja)."))
            calls.append(ToolCall(getattr(call, "id", None) or _call_id(transcript, n), name.strip(),
                                  _arguments(getattr(function, "arguments", None))))
        usage = _usage(getattr(response, "usage", None))
        reason = str(getattr(choice, "finish_reason", None) or "stop")
        stop = "refusal" if getattr(message, "refusal", None) else STOPS.get(reason, reason)
        written = call_in_text(text) if offered and not calls and self.read_text_calls else None
        if written is not None:  # an answer that is a call: run it (harness.providers.text_calls says why)
            call = ToolCall(_call_id(transcript, 1), *written)
            return ModelTurn(Message("assistant", [call]), "tool_use", usage, response.model or self.model, from_text=True)
        blocks: list[Block] = [*([TextBlock(text)] if text else []), *calls]
        if calls and stop == "end_turn":
            stop = "tool_use"  # some servers report "stop" beside their calls; the loop reads calls by this reason
        return ModelTurn(Message("assistant", blocks), stop, usage, response.model or self.model)

    def _not_a_reply(self, what: str) -> str:
        return (f"The server at {self.host} answered with something that is not a chat completion ({what}): check "
                f"{URL_SETTING} (an OpenAI-compatible address usually ends in /v1) and any proxy in between.")

    def _describe(self, err: openai.OpenAIError) -> str:
        """One sentence saying what went wrong and what to do about it."""
        tries = f"after {self.max_retries + 1} attempt{'s' if self.max_retries else ''}"
        if isinstance(err, openai.APITimeoutError):
            return f"The server at {self.host} did not answer within {self.timeout:g} s ({tries}): try again, raise timeout, or lower max_tokens."
        if isinstance(err, openai.APIConnectionError):
            return f"Cannot reach an OpenAI-compatible server at {self.host}: is it running, and is {URL_SETTING} right?"
        if not isinstance(err, openai.APIStatusError):
            return f"The openai SDK failed with {type(err).__name__}: {_first_line(str(err))}."
        status, detail = err.status_code, _detail(err)
        if 300 <= status < 400:
            return (f"The server at {self.host} answered with a redirect ({status}), which is not followed so the key and "
                    f"the conversation go nowhere unconfigured: set {URL_SETTING} to the address you trust.")
        if status in (401, 403):
            return f"The server at {self.host} rejected the API key ({status}): check {KEY_SETTING} in your environment or .env."
        if status == 404:
            return (f"The server at {self.host} found nothing there (404: {detail}): check {URL_SETTING} (it usually ends "
                    f"in /v1) and {MODEL_SETTING}, now {self.model!r}.")
        if status == 429:
            return f"The server at {self.host} is still rate-limiting (429) {tries}: {detail}."
        if status >= 500 or status in (408, 409):
            return f"The server at {self.host} kept failing ({status}) {tries}: {detail}."
        return f"The server at {self.host} rejected the request ({status}): {detail}."

    def _scrub(self, text: str) -> str:
        """``text`` with any piece of the key (eight characters or longer) hidden, and no URL's credentials."""
        return printable(redact_secrets(redact_url_credentials(text), [self._api_key]), keep_newlines=False)


def _first_line(text: str, limit: int = 200) -> str:
    return (text.strip().splitlines() or [""])[0][:limit].rstrip(".")


def _detail(err: openai.APIStatusError) -> str:
    """The server's own message, read defensively: OpenAI's ``{"error": {"message"}}``, a plain string, or nothing."""
    body = err.body
    inner = body.get("error", body) if isinstance(body, dict) else body
    message = inner.get("message") if isinstance(inner, dict) else inner
    return _first_line(message if isinstance(message, str) and message.strip() else str(err.message or "no details"))


def _arguments(raw: object) -> JSONObject:
    """A call's arguments as an object. The wire form is a JSON string; one that is not an object (cut off at
    max_tokens, or malformed) becomes ``{}``, so the tool's own error about missing parameters reaches the model."""
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw) if isinstance(raw, str) and raw.strip() else {}
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def _call_id(transcript: Transcript, n: int) -> str:
    """An id for a call the server gave none (or that was read from text): unique within the conversation."""
    return f"call_{len(transcript.tool_calls()) + n}"


def _usage(usage: Any) -> Usage:  # Any: the SDK's usage object, or None where a server sends none
    """Tokens billed, as the Messages API counts them: prompt tokens a server took from its cache kept apart."""
    prompt = getattr(usage, "prompt_tokens", None)
    output = getattr(usage, "completion_tokens", None)
    cached = getattr(getattr(usage, "prompt_tokens_details", None), "cached_tokens", None)
    prompt, output, cached = (v if isinstance(v, int) else 0 for v in (prompt, output, cached))
    cached = min(cached, prompt)
    return Usage(prompt - cached, output, 0, cached)
