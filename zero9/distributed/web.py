"""The HTTP side of ``zero9 server``: the FastAPI app over a :class:`~zero9.distributed.server.Server`.

The routes are those of Leela Zero's server (see :mod:`zero9.distributed.server` for the task
cycle); everything here is about HTTP:

- **who is asking**: a path that starts ``/c/CREDENTIAL/`` comes from the roster client that
  credential names (:mod:`zero9.distributed.roster`; an unknown or revoked one gets a 403 at
  once); any other request is anonymous, ``anonymous@ADDRESS``.
- **rate limit** per address (a token bucket), before anything is read;
- **bodies** read within a size limit and a deadline (413, 408), a client that hangs up mid-body
  logged as one line, the form's file names never used;
- **refusals**: a :class:`~zero9.distributed.validation.Rejected` becomes its 4xx with the reason
  as text, and one log line; a full disk becomes a 507 and one log line. No log line holds a
  credential (:func:`loggable`), and the form parser's warnings are counted, not each logged.

The connection-level limits (header deadline, connection caps, proxy headers) are
:mod:`zero9.distributed.edge`'s.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import os
import secrets
import threading
import time

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, PlainTextResponse
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect

from zero9.distributed import db, edge
from zero9.distributed.config import Edge
from zero9.distributed.pages import status_page
from zero9.distributed.roster import CREDENTIAL_PATTERN
from zero9.distributed.server import Caller, Server, out_of_space, refused_insert
from zero9.distributed.validation import Rejected
from zero9.util.logs import configure_logging

log = logging.getLogger("zero9.server")

DRAIN_FACTOR = 4  # an oversized body is read (and dropped) up to this many limits, then cut
SETTINGS_ENV = "ZERO9_SERVER_SETTINGS"  # how the worker processes of --workers N get their settings
LOG_FORMAT = "%(asctime)s %(process)d %(name)s %(levelname)s %(message)s"
CREDENTIAL_PATH = "/c/"
CALLER_KEY = "zero9.caller"  # where the guard leaves the Caller in the ASGI scope
MULTIPART_LOGGERS = ("python_multipart.multipart", "multipart.multipart")  # new and old package names


class HungUp(Exception):
    """The client closed the connection before its request's body arrived."""


class RateLimiter:
    """A token bucket per client address: ``per_minute`` requests, bursts of a tenth of that."""

    def __init__(self, per_minute: float):
        self.rate = per_minute / 60.0
        self.capacity = max(10.0, per_minute / 10.0)
        self.buckets: dict[str, tuple[float, float]] = {}
        self.lock = threading.Lock()

    def allow(self, client: str) -> bool:
        if self.rate <= 0:
            return True
        now = time.monotonic()
        with self.lock:
            tokens, last = self.buckets.get(client, (self.capacity, now))
            tokens = min(self.capacity, tokens + (now - last) * self.rate)
            allowed = tokens >= 1
            self.buckets[client] = (tokens - 1 if allowed else tokens, now)
        return allowed


def refuse(request: Request, rejected: Rejected) -> PlainTextResponse:
    """The refusal's answer, and a log line (the same refusal of the same client repeated: one line per
    ten seconds with a count, so a flood of forgeries cannot flood the log)."""
    caller = request.scope.get(CALLER_KEY)
    who = caller.name if caller else client_address(request.scope)
    edge.NOTICES.event(f"refused {request.method} {loggable(request.url.path)} from {who}", rejected.reason,
                       key=f"{who} {rejected.status} {rejected.reason[:24]}")
    return PlainTextResponse(rejected.reason + "\n", status_code=rejected.status)


def loggable(path: str) -> str:
    """``path`` as the log shows it: a credential in it (``/c/CREDENTIAL/...``, a live, unknown or revoked
    one, before or after the rate limit) never reaches the log: ``/c/-/...`` stands for it, and
    anything of a credential's form elsewhere in the path is cut to ``z9c-...``."""
    if path.startswith(CREDENTIAL_PATH):
        path = f"{CREDENTIAL_PATH}-/{path[len(CREDENTIAL_PATH):].partition('/')[2]}"
    return CREDENTIAL_PATTERN.sub("z9c-...", path)  # one put elsewhere by mistake ('//c/...')


class QuietLibraryLog(logging.Filter):
    """A library logger's lines through :data:`edge.NOTICES` (one line per ten seconds with a count):
    python-multipart logs a warning for every malformed body it reads, 51 lines for 50 bodies."""

    def __init__(self, kind: str):
        super().__init__()
        self.kind = kind

    def filter(self, record: logging.LogRecord) -> bool:
        edge.NOTICES.event(self.kind, record.getMessage()[:200])
        return False

    @classmethod
    def install(cls, logger_name: str, kind: str) -> None:
        logger = logging.getLogger(logger_name)
        if not any(isinstance(f, cls) for f in logger.filters):
            logger.addFilter(cls(kind))


def client_address(scope) -> str:
    return (scope.get("client") or ("unknown",))[0]


def guard(inner, server: Server, limiter: RateLimiter):
    """Plain ASGI (Starlette's ``@app.middleware`` costs a task group per request): the rate limit
    (429) and the credential in the path (403 for an unknown one), before anything is read."""

    async def guarded(scope, receive, send):
        if scope["type"] != "http":
            return await inner(scope, receive, send)
        address = client_address(scope)
        refusal = None
        if not limiter.allow(address):
            refusal = Rejected("too many requests; slow down", 429)
        elif scope["path"].startswith(CREDENTIAL_PATH):
            credential, _, rest = scope["path"][len(CREDENTIAL_PATH):].partition("/")
            name = server.roster.name_of(credential)
            if name is None:
                refusal = Rejected("unknown or revoked credential: ask the teacher for one", 403)
            else:
                scope[edge.CREDENTIALED] = True  # in uvicorn's own scope: the edge keeps this connection
                scope = dict(scope, path="/" + rest, raw_path=("/" + rest).encode())
                scope[CALLER_KEY] = Caller(name, True)
        if refusal is not None:
            return await refuse(Request(scope), refusal)(scope, receive, send)
        scope.setdefault(CALLER_KEY, Caller.anonymous(address))
        await inner(scope, receive, send)

    return guarded


async def read_form(request: Request, limit: int, seconds: float) -> tuple[dict[str, str], dict[str, bytes]]:
    """The multipart body, read within ``limit`` bytes and ``seconds``. A client's file names are never
    used (stored files are named by time and content hash); one that holds a path is refused."""
    body, received = bytearray(), 0
    try:
        async with asyncio.timeout(seconds):
            async for part in request.stream():
                received += len(part)
                if received <= limit:
                    body += part
                elif received > DRAIN_FACTOR * limit:
                    break  # far too much: hang up. Below this the rest is read and dropped, so that
                    # the client hears the 413 rather than a connection reset.
    except TimeoutError:
        raise Rejected(f"the request body did not arrive within {seconds:g} s", 408) from None
    except ClientDisconnect:
        raise HungUp from None
    if received > limit:
        raise Rejected(f"the request body is over {limit} bytes", 413)
    request._body = bytes(body)  # Starlette parses the form from this cached body
    try:
        form = await request.form(max_files=4, max_fields=20)
    except Exception as e:  # a malformed multipart body
        raise Rejected(f"unreadable form: {e}") from None
    fields, files = {}, {}
    for key, value in form.multi_items():
        if isinstance(value, str):
            fields[key] = value
        else:
            if any(mark in (value.filename or "") for mark in ("/", "\\", "..", "\0")):
                raise Rejected(f"file name {value.filename[:40]!r} holds a path")  # a probe: refuse it
            files[key] = await value.read()
    return fields, files


def needs(files: dict[str, bytes], *names: str) -> list[bytes]:
    missing = [n for n in names if n not in files]
    if missing:
        raise Rejected(f"missing file field(s): {', '.join(missing)}")
    return [files[n] for n in names]


def answered(handler):
    """A route that turns Rejected into its 4xx, a full disk into a 507 and a client that hung up into
    one log line (each without a traceback)."""

    async def route(request: Request):
        try:
            return await handler(request, request.scope[CALLER_KEY])
        except Rejected as r:
            return refuse(request, r)
        except HungUp:
            edge.NOTICES.event("client hung up", f"{request.scope[CALLER_KEY].name} closed the connection "
                               f"during {request.method} {loggable(request.url.path)}")
            return PlainTextResponse("", status_code=400)  # nobody reads it
        except Exception as error:
            if not out_of_space(error):
                raise
            edge.NOTICES.event("disk full", f"{loggable(request.url.path)} not stored: {error}")
            return PlainTextResponse("the server's disk is full; try again later\n", status_code=507)

    return route


def api_key_matches(given: str, expected: str) -> bool:
    """A constant-time comparison that any header value survives (headers arrive as latin-1 text)."""
    return secrets.compare_digest(given.encode("latin-1", "replace"), expected.encode("latin-1", "replace"))


def create_app(server: Server):
    """The FastAPI app of ``server``: the routes of Leela Zero's server (see the module docstrings)."""
    # FastAPI >= 0.16x asks OpenTelemetry's providers on every request unless told not to (a tenth
    # of an upload's CPU here); zero9 exports no telemetry. Older FastAPI has no such argument.
    quiet = ({"telemetry": {"tracing": False, "metrics": False, "logs": False}}
             if "telemetry" in inspect.signature(FastAPI.__init__).parameters else {})
    app = FastAPI(title="zero9 server", docs_url=None, redoc_url=None, **quiet)
    for name in MULTIPART_LOGGERS:
        QuietLibraryLog.install(name, "malformed form")
    app.add_middleware(guard, server=server, limiter=RateLimiter(server.limits.requests_per_minute))
    add_client_routes(app, server, edge.edge_settings().body_seconds)
    add_download_routes(app, server)
    return app


def add_client_routes(app: FastAPI, server: Server, body_seconds: float) -> None:
    """The routes the clients call in their task cycle: get a task, submit a game or a match, and the
    trainer's new network (by API key)."""

    async def committed(files: dict[str, bytes], rows: list) -> None:
        """Wait, without holding a thread, until the group commit has made ``files`` and ``rows`` durable."""
        try:
            await asyncio.wrap_future(server.commits.submit(files, rows))
        except db.IntegrityError as error:
            raise refused_insert(error) from None

    # The hot routes are plain Starlette routes: they take the request as it is, so FastAPI's
    # per-request parameter and dependency resolution (a tenth of their CPU) is skipped.
    async def get_task(request: Request, caller: Caller) -> JSONResponse:
        if server.task_state_cached():  # nothing to read: answer on the event loop
            answer, rows = server.new_task(caller)
        else:
            answer, rows = await run_in_threadpool(server.new_task, caller)
        if rows:
            await committed({}, rows)
        return JSONResponse(answer)

    async def submit(request: Request, caller: Caller) -> JSONResponse:
        """The hot path: the checks in the thread pool, then the group commit awaited on the loop."""
        server.admit(caller)
        fields, files = await read_form(request, server.limits.body, body_seconds)
        sgf, chunk = needs(files, "sgf", "trainingdata")
        answer, keep, rows = await run_in_threadpool(server.check_game, fields, sgf, chunk, caller)
        await committed(keep, rows)
        return JSONResponse(answer)

    async def submit_match(request: Request, caller: Caller) -> JSONResponse:
        server.admit(caller)
        fields, files = await read_form(request, server.limits.body, body_seconds)
        answer = await run_in_threadpool(server.submit_match, fields, *needs(files, "sgf"), caller)
        return JSONResponse(answer)

    async def submit_network(request: Request, caller: Caller) -> JSONResponse:
        if not api_key_matches(request.headers.get("x-api-key", ""), server.api_key):
            raise Rejected("wrong or missing API key (header X-Api-Key)", 403)
        fields, files = await read_form(request, server.limits.network_body, body_seconds)
        (weights,) = needs(files, "weights")
        steps = fields.get("training_steps", "0")
        steps = int(steps) if steps.isascii() and steps.isdigit() and len(steps) < 16 else 0
        net_hash = await run_in_threadpool(server.add_network, weights, steps)
        return JSONResponse({"accepted": True, "hash": net_hash})

    for path, handler, method in (("/get-task/{client_version}", get_task, "GET"),
                                  ("/get-task/{client_version}/{engine_version}", get_task, "GET"),
                                  ("/submit", submit, "POST"), ("/submit-match", submit_match, "POST"),
                                  ("/submit-network", submit_network, "POST")):
        app.add_route(path, answered(handler), methods=[method])


def add_download_routes(app: FastAPI, server: Server) -> None:
    """The routes that only read: the networks' files, the status as JSON and as the status page."""

    @app.get("/networks/{name}")
    def network(name: str):
        path = server.network_file(name.removesuffix(".gz")) if name.endswith(".gz") else None
        if path is None:
            return PlainTextResponse("no such network\n", status_code=404)
        return FileResponse(path, media_type="application/gzip", filename=path.name)

    @app.get("/best-network")
    def best_network():
        path = server.network_file(server.best_network() or "")
        if path is None:
            return PlainTextResponse("no network yet\n", status_code=404)
        return FileResponse(path, media_type="application/gzip", filename=path.name)

    @app.get("/status.json")
    def status_json() -> JSONResponse:
        return JSONResponse(server.status())

    @app.get("/", response_class=HTMLResponse)
    def index() -> HTMLResponse:
        return HTMLResponse(status_page(server.status()))


def app_from_environment():
    """uvicorn's app factory in each worker process (``--workers N``): settings from the environment."""
    configure_logging(LOG_FORMAT, root_level=logging.INFO)
    return create_app(Server.from_settings(json.loads(os.environ[SETTINGS_ENV]), sweep=False))


def serve(server: Server, settings: dict, edge_limits: Edge, host: str, port: int, workers: int) -> None:
    """Answer HTTP on ``host:port`` until stopped: in this process, or in ``workers`` processes."""
    edge.configure(edge_limits)
    if workers == 1:
        edge.run(create_app(server), host, port)
        return
    server.engine.dispose()
    os.environ[SETTINGS_ENV] = json.dumps(settings)
    edge.run("zero9.distributed.web:app_from_environment", host, port, workers)
