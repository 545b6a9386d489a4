"""The HTTP side of ``zero9 server``: the FastAPI app over a :class:`~zero9.distributed.server.Server`.

The routes are those of Leela Zero's server (see :mod:`zero9.distributed.server` for the task
cycle); everything here is about HTTP: reading bodies within limits, rate limits per address,
turning a :class:`~zero9.distributed.validation.Rejected` into its 4xx, and running uvicorn.
The web stack (FastAPI, Starlette, uvicorn) is imported only inside functions: it is the
optional ``server`` extra.
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

from zero9.distributed import db
from zero9.distributed.pages import status_page
from zero9.distributed.server import Server, already_answered
from zero9.distributed.validation import Rejected

log = logging.getLogger("zero9.server")

DRAIN_FACTOR = 4  # an oversized body is read (and dropped) up to this many limits, then cut
SETTINGS_ENV = "ZERO9_SERVER_SETTINGS"  # how the worker processes of --workers N get their settings
LOG_FORMAT = "%(asctime)s %(process)d %(name)s %(levelname)s %(message)s"


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



def create_app(server: Server):
    """The FastAPI app of ``server`` (the web stack is imported only here: it is optional)."""
    from fastapi import FastAPI, Request
    from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, PlainTextResponse

    # FastAPI >= 0.16x asks OpenTelemetry's providers on every request unless told not to (a tenth
    # of an upload's CPU here); zero9 exports no telemetry. Older FastAPI has no such argument.
    quiet = ({"telemetry": {"tracing": False, "metrics": False, "logs": False}}
             if "telemetry" in inspect.signature(FastAPI.__init__).parameters else {})
    app = FastAPI(title="zero9 server", docs_url=None, redoc_url=None, **quiet)
    limiter = RateLimiter(server.limits.requests_per_minute)

    def client_of(request: Request) -> str:
        return request.client.host if request.client else "unknown"

    def refuse(request: Request, rejected: Rejected) -> PlainTextResponse:
        log.warning("refused %s %s from %s: %s", request.method, request.url.path, client_of(request),
                    rejected.reason)
        return PlainTextResponse(rejected.reason + "\n", status_code=rejected.status)

    def rate_limited(inner):
        """Plain ASGI (Starlette's ``@app.middleware`` costs a task group per request): a 429 before
        anything is read when the client's address is over its rate."""

        async def guard(scope, receive, send):
            if scope["type"] == "http" and not limiter.allow((scope.get("client") or ("unknown",))[0]):
                refused = refuse(Request(scope), Rejected("too many requests; slow down", 429))
                await refused(scope, receive, send)
                return
            await inner(scope, receive, send)

        return guard

    app.add_middleware(rate_limited)

    async def read_form(request: Request, limit: int) -> tuple[dict[str, str], dict[str, bytes]]:
        """The multipart body, read within the size limit. A client's file names are never used
        (stored files are named by time and content hash); one that holds a path is refused."""
        body, received = bytearray(), 0
        async for part in request.stream():
            received += len(part)
            if received <= limit:
                body += part
            elif received > DRAIN_FACTOR * limit:
                break  # far too much: hang up. Below this the rest is read and dropped, so that
                # the client hears the 413 rather than a connection reset.
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

    async def committed(files: dict[str, bytes], rows: list) -> None:
        """Wait, without holding a thread, until the group commit has made ``files`` and ``rows`` durable."""
        try:
            await asyncio.wrap_future(server.commits.submit(files, rows))
        except db.IntegrityError:
            raise already_answered() from None

    # The two hot routes are plain Starlette routes: they take the request as it is, so FastAPI's
    # per-request parameter and dependency resolution (a tenth of their CPU) is skipped.
    async def get_task(request: Request) -> JSONResponse:
        if server.task_state_cached():  # nothing to read: answer on the event loop
            answer, rows = server.new_task(client_of(request))
        else:
            answer, rows = await run_sync(server.new_task, client_of(request))
        if rows:
            await committed({}, rows)
        return JSONResponse(answer)

    app.add_route("/get-task/{client_version}", get_task, methods=["GET"])
    app.add_route("/get-task/{client_version}/{engine_version}", get_task, methods=["GET"])

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

    async def submit(request: Request):
        """The hot path: the checks in the thread pool, then the group commit awaited on the loop."""
        try:
            fields, files = await read_form(request, server.limits.body)
            sgf, chunk = needs(files, "sgf", "trainingdata")
            answer, keep, row = await run_sync(server.check_game, fields, sgf, chunk, client_of(request))
            await committed(keep, [(db.games, row)])
        except Rejected as r:
            return refuse(request, r)
        return JSONResponse(answer)

    app.add_route("/submit", submit, methods=["POST"])

    @app.post("/submit-match")
    async def submit_match(request: Request):
        try:
            fields, files = await read_form(request, server.limits.body)
            answer = await run_sync(server.submit_match, fields, *needs(files, "sgf"), client_of(request))
        except Rejected as r:
            return refuse(request, r)
        return JSONResponse(answer)

    @app.post("/submit-network")
    async def submit_network(request: Request):
        try:
            if not secrets.compare_digest(request.headers.get("x-api-key", ""), server.api_key):
                raise Rejected("wrong or missing API key (header X-Api-Key)", 403)
            fields, files = await read_form(request, server.limits.network_body)
            (weights,) = needs(files, "weights")
            steps = fields.get("training_steps", "0")
            net_hash = await run_sync(server.add_network, weights, int(steps) if steps.isdigit() else 0)
        except Rejected as r:
            return refuse(request, r)
        return JSONResponse({"accepted": True, "hash": net_hash})

    @app.get("/status.json")
    def status_json() -> JSONResponse:
        return JSONResponse(server.status())

    @app.get("/", response_class=HTMLResponse)
    def index() -> HTMLResponse:
        return HTMLResponse(status_page(server.status()))

    return app


async def run_sync(fn, *args):
    """Run a blocking function (database, files, validation) in the thread pool."""
    from starlette.concurrency import run_in_threadpool

    return await run_in_threadpool(fn, *args)


def app_from_environment():
    """uvicorn's app factory in each worker process (``--workers N``): settings from the environment."""
    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT)
    return create_app(Server.from_settings(json.loads(os.environ[SETTINGS_ENV]), sweep=False))


def serve(server: Server, settings: dict, host: str, port: int, workers: int) -> None:
    """Answer HTTP on ``host:port`` until stopped: in this process, or in ``workers`` processes."""
    import uvicorn

    if workers == 1:
        uvicorn.run(create_app(server), host=host, port=port, log_level="warning")
        return
    server.engine.dispose()
    os.environ[SETTINGS_ENV] = json.dumps(settings)
    uvicorn.run("zero9.distributed.web:app_from_environment", factory=True, workers=workers,
                host=host, port=port, log_level="warning")
