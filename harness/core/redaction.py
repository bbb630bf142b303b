"""Secrets kept out of what is shown: errors, logs, status pages.

Introduced in Chapter 0 with the Anthropic provider; Chapter 5's MCP hub and Chapter 7's proxy use
:func:`hide_values` for an upstream server's last words on stderr, shown in its status (a server that
fails to log in often prints the token it was given, ``${VAR}`` already filled in).

Two kinds of secret reach text that is shown to a reader:

* **Credentials in a URL** (``http://user:password@host``): :func:`redact_url_credentials` shows
  the user-info part of every URL in a text as ``***``.
* **Known secret values** (an API key, a password, a token filled into a server's environment)
  echoed back by something else — often not whole: an endpoint quotes a key's tail, a log line
  cuts it at 20 characters. :func:`redact_secrets` therefore hides every run of text that is a
  piece of a secret at least :data:`MIN_FRAGMENT` characters long, not only the whole value.
  Eight characters of a random key are still far more than an attacker can guess; shorter
  pieces would blank out ordinary words that happen to occur in a secret.
"""
from __future__ import annotations

import re
from typing import Iterable

#: Values shorter than this are not hidden by :func:`hide_values` ("1", "true" would blank out ordinary words).
MIN_VALUE = 4
#: The shortest piece of a secret that is hidden; a secret shorter than this is hidden only whole.
MIN_FRAGMENT = 8
MASK = "***"
# scheme://userinfo@ — the user-info runs to the last '@' before the path, query or fragment.
_URL_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.\-]*://)[^/?#\s@]*(?:@[^/?#\s@]*)*@")


def redact_url_credentials(text: str) -> str:
    """``text`` with the user name and password of every URL in it shown as ``***``."""
    return _URL_USERINFO.sub(lambda m: f"{m['scheme']}{MASK}@", text)


def redact_secrets(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every piece of each secret that is :data:`MIN_FRAGMENT` or more characters long
    (and each whole secret, however short, if it is not empty) replaced by ``***``.

    A short secret is hidden wherever its characters occur, so pass only values that are secret.
    """
    hidden = [False] * len(text)
    for secret in {s for s in secrets if s}:
        _mark_whole(text, secret, hidden)
        if len(secret) < MIN_FRAGMENT:
            continue
        pieces = {secret[i:i + MIN_FRAGMENT] for i in range(len(secret) - MIN_FRAGMENT + 1)}
        for start in range(len(text) - MIN_FRAGMENT + 1):
            if text[start:start + MIN_FRAGMENT] in pieces:
                hidden[start:start + MIN_FRAGMENT] = [True] * MIN_FRAGMENT
    return _masked(text, hidden)


def hide_values(text: str, values: Iterable[str]) -> str:
    """``text`` with every value of :data:`MIN_VALUE` or more characters (and every piece of one, as in
    :func:`redact_secrets`) and every URL's credentials shown as ``***``: for a process's environment,
    whose values are not all secret but any may be."""
    kept = [v for v in values if isinstance(v, str) and len(v) >= MIN_VALUE]
    return redact_url_credentials(redact_secrets(text, kept))


def url_credentials(url: str) -> list[str]:
    """The user name and password written into ``url`` (as secrets to hide wherever they are echoed)."""
    match = _URL_USERINFO.match(url.strip())
    if not match:
        return []
    userinfo = match.group()[len(match["scheme"]):-1]
    return [part for part in userinfo.split(":", 1) if part]


def _mark_whole(text: str, secret: str, hidden: list[bool]) -> None:
    start = text.find(secret)
    while start != -1:
        hidden[start:start + len(secret)] = [True] * len(secret)
        start = text.find(secret, start + 1)


def _masked(text: str, hidden: list[bool]) -> str:
    if not any(hidden):
        return text
    out: list[str] = []
    for i, char in enumerate(text):
        if not hidden[i]:
            out.append(char)
        elif i == 0 or not hidden[i - 1]:
            out.append(MASK)
    return "".join(out)
