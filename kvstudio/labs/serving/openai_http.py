"""Talking to an OpenAI-compatible server over plain HTTP: addresses, requests, errors.

Owns `check_base_url` (the server's base address from what a person typed),
`open_url` / `read_body` (a GET or a JSON POST and its bounded answer, every
failure one ValueError that says what to do: nothing listening, a timeout, an
HTTP error with the server's own words, not an HTTP server), `served_models`
(``GET /v1/models``) and `choose_model`. The standard library only (urllib):
``served.py`` streams the serving lab's requests through it. It never imports Qt.
"""

from __future__ import annotations

import http.client
import json
import socket
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from typing import Any

MAX_URL_CHARS = 2048
MAX_ERROR_BYTES = 4096  # the part of an error answer quoted back
DEFAULT_TIMEOUT_S = 60.0  # the longest wait for any one read from the server
EXAMPLE_URL = "http://127.0.0.1:8000"


# ---- the server's address -------------------------------------------------------------------
def check_base_url(text: str) -> str:
    """The server's base address from what a person typed (``http://host:port``, with or
    without ``/v1``); ValueError with an example for anything else."""
    hint = (f"give the server's address, e.g. {EXAMPLE_URL} (vLLM's default port; "
            "llama-server's is 8080, SGLang's 30000); the /v1 part is optional")
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"No server address: {hint}.")
    url = text.strip()
    if len(url) > MAX_URL_CHARS:
        raise ValueError(f"The server address is {len(url):,} characters long: {hint}.")
    parsed = urllib.parse.urlsplit(url)
    if parsed.scheme not in ("http", "https"):
        raise ValueError(f"{url[:80]!r} is not an http:// or https:// address: {hint}.")
    try:
        host, port = parsed.hostname, parsed.port
    except ValueError:
        raise ValueError(f"{url[:80]!r} has a port that is not a number from 0 to 65535: "
                         f"{hint}.") from None
    if not host or any(c.isspace() for c in url):
        raise ValueError(f"{url[:80]!r} names no host: {hint}.")
    if parsed.query or parsed.fragment or parsed.username or parsed.password:
        raise ValueError(f"{url[:80]!r} carries a query, a fragment or a password: {hint}.")
    path = parsed.path.rstrip("/")
    for tail in ("/chat/completions", "/completions", "/models"):
        path = path.removesuffix(tail)
    path = path.removesuffix("/v1")
    del port  # checked above: a bad port is refused before any connection
    return urllib.parse.urlunsplit((parsed.scheme, parsed.netloc, path, "", ""))


def error_text(body: bytes) -> str:
    """The server's own words from an error answer (OpenAI's {"error": {"message"}})."""
    text = body[:MAX_ERROR_BYTES].decode("utf-8", "replace").strip()
    try:
        data = json.loads(text)
    except ValueError:
        return " ".join(text.split())[:300] or "no message"
    if isinstance(data, dict):
        err = data.get("error", data)
        if isinstance(err, dict):
            message = err.get("message") or err.get("detail") or err
            return str(message)[:300]
        return str(err)[:300]
    return text[:300]


def open_url(url: str, body: dict[str, Any] | None, timeout_s: float) -> http.client.HTTPResponse:
    """GET (no body) or POST a JSON body; every failure is one ValueError naming `url`."""
    data = None if body is None else json.dumps(body).encode("utf-8")
    request = urllib.request.Request(url, data=data, method="GET" if body is None else "POST")
    request.add_header("Accept", "text/event-stream, application/json, text/plain")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    where = urllib.parse.urlsplit(url).netloc
    try:
        response: http.client.HTTPResponse = urllib.request.urlopen(request, timeout=timeout_s)
        return response
    except urllib.error.HTTPError as exc:
        message = error_text(exc.read(MAX_ERROR_BYTES) if exc.fp is not None else b"")
        exc.close()
        raise ValueError(f"{url} answered HTTP {exc.code} ({exc.reason}): {message}") from None
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, ConnectionRefusedError):
            raise ValueError(f"Nothing answers at {where} (connection refused): is the server "
                             "running, on this host and port?") from None
        if isinstance(reason, TimeoutError):
            raise ValueError(f"{where} did not answer within {timeout_s:g} s; is it the "
                             "server's address? (a longer --timeout waits more)") from None
        if isinstance(reason, socket.gaierror):
            raise ValueError(f"Cannot find the host of {url}: {reason.strerror}.") from None
        raise ValueError(f"Cannot reach {url}: {reason}.") from None
    except TimeoutError:
        raise ValueError(f"{where} did not answer within {timeout_s:g} s; is it the "
                         "server's address? (a longer --timeout waits more)") from None
    except (http.client.HTTPException, ConnectionError) as exc:
        raise ValueError(f"{where} is not an HTTP server, or it closed the connection "
                         f"({type(exc).__name__}): is it the server's address?") from None
    except OSError as exc:
        raise ValueError(f"Cannot reach {url}: {exc}.") from None


def read_body(response: http.client.HTTPResponse, url: str, limit: int, timeout_s: float) -> bytes:
    where = urllib.parse.urlsplit(url).netloc
    try:
        data = response.read(limit + 1)
    except TimeoutError:
        raise ValueError(f"{where} stopped answering for {timeout_s:g} s while sending "
                         f"{url}.") from None
    except (http.client.HTTPException, OSError) as exc:
        raise ValueError(f"{where} broke off its answer to {url} ({exc}).") from None
    finally:
        response.close()
    if len(data) > limit:
        raise ValueError(f"{url} sent more than {limit:,} bytes: not what a server of the "
                         "OpenAI API answers.")
    return data


def served_models(base: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> tuple[str, ...]:
    """The model ids ``GET /v1/models`` lists (ValueError when the answer is not OpenAI's)."""
    url = f"{base}/v1/models"
    raw = read_body(open_url(url, None, timeout_s), url, MAX_ERROR_BYTES * 256, timeout_s)
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise ValueError(f"{url} answered something that is not JSON: not a server of the "
                         "OpenAI API (vLLM, SGLang, llama-server …)?") from None
    models = data.get("data") if isinstance(data, dict) else None
    if not isinstance(models, list):
        raise ValueError(f"{url} answered JSON without a 'data' list of models: not a server "
                         "of the OpenAI API?")
    return tuple(str(m["id"]) for m in models if isinstance(m, dict) and "id" in m)


def choose_model(asked: str | None, served: Sequence[str], base: str) -> str:
    """The model to ask for: `asked` (checked against the server's list when it has one), or
    the server's only model."""
    if asked is not None:
        if not asked.strip():
            raise ValueError("The model name is empty; give one the server lists at "
                             f"{base}/v1/models.")
        if served and asked not in served:
            names = ", ".join(served[:10]) + (" …" if len(served) > 10 else "")
            raise ValueError(f"The server does not serve {asked!r}; it lists: {names}. "
                             "Give --model one of them.")
        return asked
    if len(served) == 1:
        return served[0]
    if not served:
        raise ValueError(f"{base}/v1/models lists no model; give --model NAME.")
    raise ValueError(f"The server lists {len(served)} models ({', '.join(served[:10])}); "
                     "choose one with --model.")
