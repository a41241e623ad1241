"""Streaming one assistant message from any model.

:func:`stream_message` starts a background task that posts the request, decodes SSE, drives the
API's parser and queues events; the caller iterates the returned :class:`AssistantStream`.

- Retries: HTTP 429 / 5xx / overload / a dropped connection *before any output* are retried with
  exponential backoff (``base_delay`` * 2^n) or the server's ``Retry-After``; ``on_retry`` hears
  about each wait (the agent turns it into ``auto_retry_*`` events).
- Failures after output began, and the final failure, end the message with ``stopReason:
  "error"``, keeping what streamed.
- Abort: :meth:`AssistantStream.abort` cancels the task; the HTTP stream is closed at once and
  the message ends ``aborted``.
- Stalls: a server can stop sending without closing the connection. A watchdog
  (:class:`_Watchdog`) gives up after :class:`IdleLimits` seconds without a byte (longer before
  the first byte, when a model may still be thinking): retried like a dropped connection when
  nothing was streamed, an error keeping the partial reply otherwise. No per-read HTTP timeout
  is used, so one slow read never waits longer than these limits. ``on_stall`` hears, once per
  whole second, how long the server has been silent (after ``notice`` seconds), and once more
  with 0 when data flows again, so a UI can say why nothing moves.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import math
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx
import orjson

from pi_tui import jsonio
from pi_tui.ai.builder import MessageBuilder
from pi_tui.ai.errors import ConfigError, ProviderError, is_context_overflow
from pi_tui.ai.events import StreamEvent
from pi_tui.ai.http import IdleLimits, shared_client
from pi_tui.ai.oauth.copilot import COPILOT_PROVIDER, copilot_headers
from pi_tui.ai.protocol import ApiClient, HttpRequest, frame_decoder, refine_http_error
from pi_tui.ai.registry import get_client
from pi_tui.ai.surrogates import clean_context
from pi_tui.ai.types import Context, Model, StreamOptions
from pi_tui.gc_control import paused_gc
from pi_tui.messages import AssistantMessage
from pi_tui.redact import redact_secrets

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})


@dataclass(slots=True)
class RetryInfo:
    attempt: int
    max_retries: int
    delay: float
    error: str


RetryCallback = Callable[[RetryInfo], None]


@dataclass(slots=True)
class StallInfo:
    idle_seconds: int
    """Whole seconds without a byte; 0: data flows again (or the attempt ended)."""
    timeout: float
    """The limit that applies now; the attempt is given up when ``idle_seconds`` reaches it."""
    received: bool
    """Whether any byte of the reply had arrived before the silence."""


StallCallback = Callable[[StallInfo], None]


def notice_after(limit: float, notice: float = 10.0) -> int:
    """When silence is first reported: ``notice`` seconds, or half a short limit (whole seconds,
    at least 1), so a limit under 20 s still gets its notice before it fires."""
    return max(1, math.ceil(min(notice, limit / 2)))


def stall_text(seconds: float) -> str:
    """The error for a stream given up after ``seconds`` of silence."""
    return f"No data from the server for {seconds:g} s"


class _Watchdog:
    """Measures the silence of one attempt and ends it when a limit is reached.

    The read loop only stores the time of the last chunk (:meth:`fed`); this task wakes when
    something could be due (the limit, or the next whole second of a reported stall) and, when
    the limit is reached, fires the attempt's ``asyncio.timeout`` scope, which cancels the HTTP
    read cleanly and raises TimeoutError there.
    """

    def __init__(self, limits: IdleLimits, on_stall: StallCallback | None) -> None:
        self.limits = limits
        self.on_stall = on_stall
        self.loop = asyncio.get_running_loop()
        self.last = self.loop.time()
        self.received = False
        self.reported = 0
        """The whole seconds last reported to ``on_stall`` (0: no stall reported)."""
        self.fired_after: float | None = None
        """The limit that ended the attempt, once it has."""

    def fed(self) -> None:
        """A chunk arrived (called per chunk: keep it cheap)."""
        self.last = self.loop.time()
        self.received = True
        if self.reported:
            self.resumed()

    def resumed(self) -> None:
        if self.reported:
            self.reported = 0
            if self.on_stall is not None:
                self.on_stall(StallInfo(0, self.limit, self.received))

    @property
    def limit(self) -> float:
        return self.limits.between if self.received else self.limits.first_byte

    async def run(self, scope: asyncio.Timeout) -> None:
        while True:
            now = self.loop.time()
            limit = self.limit
            idle = now - self.last
            if idle >= limit:
                self.fired_after = limit
                scope.reschedule(now)
                return
            notice = notice_after(limit, self.limits.notice)
            if idle >= notice and notice < limit:
                whole = int(idle)
                if whole != self.reported:
                    self.reported = whole
                    if self.on_stall is not None:
                        self.on_stall(StallInfo(whole, limit, self.received))
                due = self.last + whole + 1
            else:
                due = self.last + notice
            wake = min(due, self.last + limit)
            if not self.received:
                # The first byte may come any moment and switch to the shorter limit, whose
                # notice or end is then due that much later at the earliest.
                between = self.limits.between
                wake = min(wake, now + min(between, notice_after(between, self.limits.notice)))
            await asyncio.sleep(max(wake - now, 0.005))


class WirePipeline:
    """Response bytes -> frames (SSE, or the client's own decoder) -> the API's parser ->
    builder events, one network chunk at a time.

    Each chunk is processed with the cycle collector paused: streaming makes thousands of small
    acyclic objects per second (decoded JSON, events) that reference counting frees at once, so
    generation-0 passes over them are pure overhead (about a fifth of the parse time).
    """

    def __init__(self, client: ApiClient, builder: MessageBuilder) -> None:
        self.builder = builder
        self.decoder = frame_decoder(client)
        self.parser = client.parser(builder)

    def feed(self, chunk: bytes) -> list[StreamEvent]:
        with paused_gc():
            self.decoder.feed_into(chunk, self.parser.on_event)
        return self.builder.take_events()

    def close(self) -> list[StreamEvent]:
        """End of the body: flush the decoder and let the parser finish the message."""
        self.decoder.close_into(self.parser.on_event)
        self.parser.end()
        return self.builder.take_events()


class AssistantStream:
    """Async iterator of :class:`StreamEvent`; ``await result()`` gives the final message."""

    def __init__(self) -> None:
        self._queue: asyncio.Queue[StreamEvent | None] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        self._result: asyncio.Future[AssistantMessage] = asyncio.get_running_loop().create_future()
        self._started = time.monotonic()
        """When the reply was asked for: its ``durationMs`` counts from here (retries included)."""
        self._retry_cancel = asyncio.Event()
        self._retry_waiting = False

    def __aiter__(self) -> AsyncIterator[StreamEvent]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[StreamEvent]:
        while True:
            event = await self._queue.get()
            if event is None:
                return
            yield event

    async def result(self) -> AssistantMessage:
        return await asyncio.shield(self._result)

    def abort(self) -> None:
        """Stop now: the message ends with ``stopReason: "aborted"``."""
        if self._task is not None and not self._task.done():
            self._task.cancel()

    def abort_here(self) -> list[StreamEvent]:
        """Abort, and return the events already queued behind the one just taken.

        Events arrive a network chunk at a time, so when a consumer decides to stop at one event
        (a stream rule matched), the message may already hold the deltas of the events after it:
        how many depends on how the bytes happened to be split. The caller drops those with
        :func:`~pi_tui.ai.events.without_events`, so the cut lands at the same place every time.
        """
        unseen: list[StreamEvent] = []
        while not self._queue.empty():
            event = self._queue.get_nowait()
            if event is not None:
                unseen.append(event)
        self.abort()
        return unseen

    def abort_retry(self) -> bool:
        """Cancel the wait before a retry: the reply ends with the error that caused it and no
        further attempt is made. False when no retry wait is going on."""
        if not self._retry_waiting:
            return False
        self._retry_cancel.set()
        return True

    @property
    def done(self) -> bool:
        return self._result.done()

    def _push(self, events: list[StreamEvent]) -> None:
        for event in events:
            if event.type in ("done", "error") and not self._result.done():
                self._time(event.partial)
                self._result.set_result(event.partial)
            self._queue.put_nowait(event)

    def _time(self, message: AssistantMessage) -> None:
        """pi 1.x's ``durationMs`` on the final message (done, error or aborted): whole
        milliseconds on a monotonic clock from the request to the last event, unless the message
        already has one (a reply forwarded from elsewhere keeps its own)."""
        if message.duration_ms is None:
            message.duration_ms = max(0, round((time.monotonic() - self._started) * 1000))

    def _close(self) -> None:
        if not self._closed:
            self._closed = True
            self._queue.put_nowait(None)


def stream_message(
    model: Model,
    context: Context,
    options: StreamOptions | None = None,
    *,
    on_retry: RetryCallback | None = None,
    http: httpx.AsyncClient | None = None,
    idle: IdleLimits | None = None,
    on_stall: StallCallback | None = None,
    on_payload: PayloadHook | None = None,
    on_response: ResponseHook | None = None,
) -> AssistantStream:
    """Start streaming one assistant message; must be called inside a running event loop.

    ``on_payload`` gets the request body once built and returns the one to send (extensions'
    ``before_provider_request``); ``on_response`` gets each response's status and headers
    before its body is read (``after_provider_response``).
    """
    stream = AssistantStream()
    runner = _Runner(model, context, options or StreamOptions(), stream, on_retry, http, idle, on_stall)
    runner.on_payload, runner.on_response = on_payload, on_response
    stream._task = asyncio.get_running_loop().create_task(runner.run())
    stream._task.add_done_callback(runner.on_task_done)
    return stream


async def complete(model: Model, context: Context, options: StreamOptions | None = None) -> AssistantMessage:
    """Stream and return only the final message."""
    stream = stream_message(model, context, options)
    async for _event in stream:
        pass
    return await stream.result()


class _Runner:
    def __init__(
        self,
        model: Model,
        context: Context,
        options: StreamOptions,
        stream: AssistantStream,
        on_retry: RetryCallback | None,
        http: httpx.AsyncClient | None,
        idle: IdleLimits | None = None,
        on_stall: StallCallback | None = None,
    ) -> None:
        # A login that names its own API host (Copilot) moves the request there.
        self.model = model.model_copy(update={"base_url": options.base_url}) if options.base_url else model
        self.context = context
        self.options = options
        self.stream = stream
        self.on_retry = on_retry
        self.http = http
        self.builder = MessageBuilder(model)
        self.idle = idle or IdleLimits()
        self.on_stall = on_stall
        self.on_payload: PayloadHook | None = None
        self.on_response: ResponseHook | None = None

    async def run(self) -> None:
        # Always self.builder: a retry replaces it, and the message is the last attempt's.
        try:
            await self._attempts()
        except asyncio.CancelledError:
            self.builder.fail("Request was aborted", aborted=True)
        except (ProviderError, ConfigError) as error:  # ConfigError: e.g. no AWS credentials
            self.builder.fail(str(error))
        except Exception as error:  # a bug or an unexpected library error: still end the message
            self.builder.fail(f"{type(error).__name__}: {error}")
        finally:
            self.end()

    def end(self) -> None:
        """Deliver the final events and close the stream (idempotent)."""
        if self.stream._closed:
            return
        if not self.builder.finished:
            self.builder.fail("The stream ended unexpectedly")
        self.stream._push(self.builder.take_events())
        self.stream._close()

    def on_task_done(self, task: asyncio.Task[None]) -> None:
        """A task cancelled before its first step never enters ``run``: end the message here."""
        if task.cancelled() and not self.stream._closed:
            self.builder.fail("Request was aborted", aborted=True)
            self.end()

    async def _attempts(self) -> None:
        if self.model.api == "offline":
            from pi_tui.ai.offline import run_offline

            await run_offline(self.model, self.context, self.options, self.builder, self._flush)
            return
        client = get_client(self.model.api)
        with paused_gc():  # a long session's request is ~100k acyclic dicts: no cycle scans
            request = client.build_request(self.model, self.context, self.options)
            payload = _plain_json(request.body)
            if payload is None:
                # A string holds a surrogate (orjson refuses it): a text read from a session
                # file may hold a lone one, an emoji cut in half by Node. pi removes those from
                # what it sends (texts, thinking, tool results, system prompt); the session keeps
                # them. Found this way, ordinary requests pay nothing for the check.
                cleaned = clean_context(self.context)
                if cleaned is not self.context:
                    request = client.build_request(self.model, cleaned, self.options)
        if self.model.provider == COPILOT_PROVIDER:
            # pi's per-request Copilot headers (X-Initiator...) on every API kind; the request's
            # own (models.json's, the caller's) win.
            request.headers = {**copilot_headers(self.context), **request.headers}
        if self.on_payload is not None:
            request.body = await self.on_payload(request.body)
            payload = None  # the extension may have changed it
        with paused_gc():
            # jsonio: what is left (a tool call's arguments, as pi leaves them, or an
            # extension's text) goes out as Node writes it.
            payload = payload if payload is not None else jsonio.dumps(request.body)
            # The one place every request to every provider passes (after extensions changed
            # the body): the agent's transformer hides secrets here (pi_tui/secrets/active.py).
            transform = self.options.transform_payload
            if transform is not None:
                credentials = [self.options.api_key or "", *self.options.headers.values()]
                payload = transform(request.body, payload, credentials)
        # Retries resend the bytes; the dicts (as large as the bytes on a long session) go now.
        request.body = {}
        attempt = 0
        while True:
            try:
                await self._once(client, request, payload)
                return
            except ProviderError as error:
                if not error.retryable or self.builder.has_output or attempt >= self.options.max_retries:
                    if error.retryable and attempt > 0:
                        raise ProviderError(f"{error} (gave up after {attempt} retries)") from error
                    raise
                if error.retry_after is not None and error.retry_after > self.options.max_delay:
                    # pi 1.x: a requested wait beyond the limit (retry.maxAgentDelayMs) fails
                    # now instead of holding the session for it.
                    wanted, limit = math.ceil(error.retry_after), math.ceil(self.options.max_delay)
                    raise ProviderError(
                        f"{error} (the server asks to retry in {wanted} s, longer than the "
                        f"{limit} s retry delay limit)"
                    ) from error
                attempt += 1
                delay = self._delay(attempt, error.retry_after)
                if self.on_retry is not None:
                    self.on_retry(RetryInfo(attempt, self.options.max_retries, delay, str(error)))
                if await self._wait_for_retry(delay):
                    raise ProviderError(f"{error} (retry cancelled)") from error
                self.builder = MessageBuilder(self.model, started=self.builder._started)

    async def _wait_for_retry(self, delay: float) -> bool:
        """Sleep ``delay`` seconds before the next attempt; True when ``abort_retry`` cut it short."""
        stream = self.stream
        stream._retry_waiting = True
        try:
            async with asyncio.timeout(delay):
                await stream._retry_cancel.wait()
            return True
        except TimeoutError:
            return False
        finally:
            stream._retry_waiting = False

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return max(retry_after, 0.0)  # within max_delay: a longer one already failed
        return min(self.options.base_delay * 2.0 ** (attempt - 1), self.options.max_delay)

    async def _once(self, client: ApiClient, request: object, payload: bytes) -> None:
        assert isinstance(request, HttpRequest)
        http = self.http or shared_client()
        # No read timeout: the watchdog's idle limits decide how long a silent stream may last.
        timeout = httpx.Timeout(None, connect=30.0)
        watchdog = _Watchdog(self.idle, self.on_stall)
        try:
            async with asyncio.timeout(None) as scope:
                watch = asyncio.get_running_loop().create_task(watchdog.run(scope))
                try:
                    await self._exchange(client, request, payload, http, timeout, watchdog)
                finally:
                    watch.cancel()
                    watchdog.resumed()
        except TimeoutError:
            if watchdog.fired_after is None:
                raise
            if self.builder.has_output:
                raise ProviderError(f"{stall_text(watchdog.fired_after)}; the reply was cut") from None
            raise ProviderError(stall_text(watchdog.fired_after), retryable=True) from None

    async def _exchange(
        self,
        client: ApiClient,
        request: HttpRequest,
        payload: bytes,
        http: httpx.AsyncClient,
        timeout: httpx.Timeout,
        watchdog: _Watchdog,
    ) -> None:
        """One request and its streamed answer."""
        try:
            headers = {"content-type": "application/json", **request.headers}
            signed: dict[str, str] = {}
            if request.signer is not None:
                # Over the bytes sent now (retries included), before content-length is added.
                signed = await request.signer(request.url, headers, payload)
                headers.update(signed)
            headers["content-length"] = str(len(payload))
            async with http.stream(
                "POST", request.url, headers=headers, content=_slices(payload), timeout=timeout
            ) as response:
                if self.on_response is not None:
                    await self.on_response(response.status_code, dict(response.headers))
                if response.status_code >= 400:
                    body = (await response.aread()).decode("utf-8", "replace")
                    # A server may quote what it was sent (a key, a models.json header): the
                    # error is shown, saved and printed, so those values never appear in it.
                    known = _credential_values({**request.headers, **signed})
                    body = redact_secrets(body, known=known)
                    error = http_error(response.status_code, body, response.headers)
                    raise refine_http_error(client, error, body)
                pipeline = WirePipeline(client, self.builder)
                push = self.stream._push
                try:
                    # aiter_bytes, not aiter_raw: httpx asks for gzip and deflate, and a server that
                    # uses them sent bytes the SSE decoder read as nothing (an empty reply).
                    fed = watchdog.fed
                    async for chunk in response.aiter_bytes():
                        fed()
                        push(pipeline.feed(chunk))
                    push(pipeline.close())
                except (httpx.TransportError, httpx.StreamError, httpx.DecodingError) as error:
                    raise ProviderError(
                        f"Connection lost while streaming: {describe(error)}",
                        retryable=not self.builder.has_output,
                    ) from error
        except (httpx.TransportError, httpx.StreamError) as error:
            raise ProviderError(f"Cannot reach {request.url}: {describe(error)}", retryable=True) from error

    def _flush(self) -> None:
        self.stream._push(self.builder.take_events())


def _plain_json(body: Any) -> bytes | None:
    """``body`` as JSON by orjson, or None when a string in it holds a surrogate."""
    try:
        return orjson.dumps(body)
    except TypeError:
        return None


SEND_SLICE = 1 << 20
"""Bytes handed to the transport at a time. A whole body given at once is copied by asyncio into
its send buffer when the socket cannot take it all: on a long session one more copy of a 30-50 MB
request."""


async def _slices(payload: bytes) -> AsyncIterator[bytes]:
    """``payload`` a slice at a time (sent under its own Content-Length, not chunked)."""
    view = memoryview(payload)
    for start in range(0, len(view), SEND_SLICE):
        yield view[start : start + SEND_SLICE]  # type: ignore[misc]


PayloadHook = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
ResponseHook = Callable[[int, dict[str, str]], Awaitable[None]]


def describe(error: BaseException) -> str:
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


_NOT_SECRET_HEADERS = frozenset(
    {"content-type", "accept", "user-agent", "anthropic-version", "anthropic-beta", "x-amz-date"}
)


def _credential_values(headers: dict[str, str]) -> list[str]:
    """The request's header values that may be credentials (all but the plainly public ones)."""
    values: list[str] = []
    for name, value in headers.items():
        if name.lower() in _NOT_SECRET_HEADERS:
            continue
        values.append(value)
        scheme, _, token = value.partition(" ")
        if token and scheme.lower() in ("bearer", "basic"):
            values.append(token)
    return values


def http_error(status: int, body: str, headers: httpx.Headers) -> ProviderError:
    """The ProviderError for an HTTP error answer (body shortened, retry hint parsed)."""
    snippet = _error_summary(body)
    retryable = status in RETRYABLE_STATUS
    overflow = status in (400, 413) and is_context_overflow(body)
    message = f"HTTP {status}" + (f": {snippet}" if snippet else "")
    if status == 429:  # too many requests or tokens for the account: not the server's load
        message = "Rate limited by the provider (HTTP 429)" + (f": {snippet}" if snippet else "")
    elif status == 529 or "overloaded" in body.lower():
        message = f"Provider overloaded (HTTP {status})" + (f": {snippet}" if snippet else "")
        retryable = True
    return ProviderError(
        message,
        status=status,
        retryable=retryable,
        retry_after=retry_after(headers),
        context_overflow=overflow,
    )


def _error_summary(body: str) -> str:
    """The provider's own message from a JSON error body (``{"error": {"message", "type"}}`` and
    the like), else the body squeezed onto one line."""
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        data = None
    if isinstance(data, list) and data:  # Gemini wraps errors in a list
        data = data[0]
    if isinstance(data, dict):
        error = data.get("error", data)
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            kind = error.get("type") or error.get("code") or error.get("status")
            message = " ".join(error["message"].split())
            return (f"{message} ({kind})" if kind else message)[:500]
        if isinstance(error, str):
            return " ".join(error.split())[:500]
    return " ".join(body.split())[:500]


def retry_after(headers: httpx.Headers) -> float | None:
    """Seconds to wait from ``retry-after-ms`` / ``Retry-After`` (seconds or an HTTP date)."""
    milliseconds = headers.get("retry-after-ms")
    if milliseconds:
        with contextlib.suppress(ValueError):
            return float(milliseconds) / 1000
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        parsed = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None  # junk: fall back to our own backoff
    return max(parsed.timestamp() - time.time(), 0.0)
