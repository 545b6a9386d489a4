"""``zero9 analysis``: KataGo's JSON analysis engine on stdin/stdout (what KaTrain runs).

KataGo's docs/Analysis_Engine.md is the protocol: one JSON query a line in, one JSON
response a line out per analysed turn, asynchronous (responses may come in any order).
Queries are checked by :mod:`zero9.protocols.analysis_query`; the numbers come from
:func:`zero9.search.analysis.analyse_many`; :mod:`zero9.protocols.kata_format` names them.

Vocabulary:

- **queue**: checked turns wait in a priority queue (higher ``priority`` first, then
  arrival). The **worker** takes every waiting plain turn of the highest priority (up to
  ``-analysis-threads``, default :data:`DEFAULT_BATCH`) and analyses them **together**: one
  tree each, their leaves in shared net calls, as KataGo batches positions across its
  analysis threads.
- **tree**: each turn has one search tree, made in the first batch it is in and kept
  until it answers; every later batch searches that tree on (nothing restarts), so every
  response of a turn has at least the visits of the one before it.
- **reporting turn** (``reportDuringSearchEvery``, which KaTrain sends with every query):
  searched in **rounds** that double its tree's visits (16, 32, ...); a round is one batch
  with the other waiting turns. After a round, a response with ``"isDuringSearch": true``
  goes out once the interval has passed, and the last round's with ``false``. Between
  rounds the turn goes back to the queue, so pondering (KaTrain's ``maxVisits``
  10,000,000) never starves other queries.
- **actions**: ``query_version``, ``clear_cache`` and ``terminate`` (answered by echoing
  the query); a terminated turn that has not started answers ``"noResults": true``, one
  that is searching (or waiting between rounds) answers from its tree, as final.
- **errors**: a line that is not JSON (or is nested too deep:
  :func:`zero9.protocols.kata_format.decode_json`), a query without ``id``, or a field
  zero9 refuses gets KataGo's error object (``{"error": ..., "field": ..., "id": ...}``,
  the id wherever it can be read) and nothing else changes; the engine keeps serving. Lines
  longer than :data:`MAX_QUERY_CHARS` are refused the same way, reading at most that much
  of them. Any fault of zero9's own while reading a query or searching a batch is reported
  the same way (``internal error: ...``) for the queries concerned.
- **time limit**: ``overrideSettings.maxTime`` (KaTrain sends 8 s) counts the seconds of
  the batches a turn was searched in, not its time waiting in the queue; when it runs out
  the turn answers with the visits its tree has. A batch stops at its first turn's limit;
  the other turns go back to the queue and search their trees on.
- **perspective**: ``reportAnalysisWinratesAs`` from the config (default ``BLACK``, as
  KataGo's analysis engine), overridden per query by ``overrideSettings``.
- **end of input**: the queue is finished, then the engine exits (KataGo's rule), unless
  ``-quit-without-waiting``.
"""

from __future__ import annotations

import heapq
import itertools
import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any, TextIO

from zero9 import __version__
from zero9.games import BLACK
from zero9.protocols.analysis_query import Query, QueryError, Turn, parse_query
from zero9.protocols.gtp.loop import read_line
from zero9.protocols.kata_format import (
    JSONTextError,
    board_order,
    decode_json,
    flip_sign,
    json_numbers,
    move_fields,
    policy_order,
    root_fields,
    shown,
)
from zero9.search.analysis import PositionAnalysis, make_evaluator, read_analyses, search_on, start_searches
from zero9.search.puct import Tree

DEFAULT_BATCH = 16  # positions analysed together (KataGo's numAnalysisThreads)
MAX_QUERY_CHARS = 1 << 20
FIRST_ROUND_VISITS = 16
KATAGO_VERSION = "1.16.0"  # the KataGo protocol version zero9 follows (query_version)


@dataclass(order=True)
class _Item:
    sort_key: tuple
    turn: Turn = field(compare=False)
    query: Query = field(compare=False)
    started: bool = field(default=False, compare=False)  # its tree was made (tree None: a finished game)
    tree: Tree | None = field(default=None, compare=False)  # the turn's one search, grown round by round
    searched: float = field(default=0.0, compare=False)  # seconds of batches it was searched in
    last_report: float = field(default=-1e9, compare=False)


class AnalysisEngine:
    """The queue, the worker and the responses (see the module docstring)."""

    def __init__(self, nets, out: TextIO, default_visits: int = 500, perspective: str = "BLACK",
                 seed: int | None = None, batch: int = DEFAULT_BATCH):
        self.nets = nets  # size -> net (NetFinder)
        self.out = out
        self.default_visits = default_visits
        self.perspective = perspective
        self.seed = seed
        self.batch = max(1, batch)
        self._queue: list[_Item] = []
        self._order = itertools.count()
        self._lock = threading.Condition()
        self._write_lock = threading.Lock()
        self._closing = False
        self._quit_now = False
        self._terminated: set[tuple[str, int | None]] = set()
        self._finishing: list[_Item] = []  # terminated while waiting, with a tree to answer from
        self._evaluators: dict[int, Any] = {}
        self.positions_analysed = 0

    # -- input ----------------------------------------------------------------------------------------

    def serve(self, inp: TextIO, wait: bool = True) -> int:
        """Read queries until end of input, then finish the queue (``wait``) and return 0."""
        worker = threading.Thread(target=self._work, daemon=True)
        worker.start()
        while True:
            line = read_line(inp, MAX_QUERY_CHARS)
            if line.eof:
                break
            if line.overlong:
                self.write({"error": f"query line too long: more than {MAX_QUERY_CHARS:,} characters"})
                continue
            if line.text.strip():
                self.handle_line(line.text)
        with self._lock:
            self._closing = True
            self._quit_now = not wait
            self._lock.notify_all()
        worker.join()
        return 0

    def handle_line(self, text: str) -> None:
        """One input line: a query is checked and queued, an action answered, an error reported.

        Nothing a line holds stops the engine: what zero9 refuses, and any fault of its own
        while reading the line, is an error for that query (its id where it can be read)."""
        try:
            data = decode_json(text)
        except JSONTextError as e:
            self.write({"error": str(e), **({} if e.query_id is None else {"id": e.query_id})})
            return
        if not isinstance(data, dict):
            self.write({"error": "a query must be a JSON object"})
            return
        if "id" not in data or not isinstance(data["id"], str):
            self.write({"error": "query needs a string field id", "field": "id"})
            return
        try:
            self._handle_query(data)
        except Exception as e:  # a bug must not stop the engine: report it for this query
            self.write({"error": f"internal error: {type(e).__name__}: {shown(str(e))}", "id": data["id"]})

    def _handle_query(self, data: dict) -> None:
        if "action" in data:
            self._action(data)
            return
        try:
            query = parse_query(data, self.default_visits, self.perspective, self.nets.check_size)
        except QueryError as e:
            self.write({"error": str(e), "field": e.field, "id": data["id"]})
            return
        for name, message in query.warnings:
            self.write({"warning": message, "field": name, "id": query.id})
        with self._lock:
            for turn in query.turns:
                self._terminated.discard((query.id, turn.number))
                self._terminated.discard((query.id, None))
                self._push(_Item((), turn, query))
            self._lock.notify_all()

    def _action(self, data: dict) -> None:
        action = data["action"]
        if action == "query_version":
            self.write({**data, "version": KATAGO_VERSION, "git_hash": f"zero9-{__version__}"})
        elif action == "clear_cache":
            with self._lock:
                self._evaluators.clear()
            self.write(data)
        elif action == "terminate":
            target = data.get("terminateId")
            numbers = data.get("turnNumbers")
            whole = numbers is None or (isinstance(numbers, list) and all(
                isinstance(n, int) and not isinstance(n, bool) for n in numbers))
            if not isinstance(target, str) or not whole:
                self.write({"error": "terminate needs terminateId (and optional turnNumbers: integers)",
                            "field": "terminateId", "id": data["id"]})
                return
            self.write(data)
            self._terminate(target, numbers)
        else:
            self.write({"error": f"unknown action {shown(action)}", "field": "action", "id": data["id"]})

    def _terminate(self, target: str, numbers: list | None) -> None:
        with self._lock:
            keys = [(target, None)] if numbers is None else [(target, n) for n in numbers]
            self._terminated.update(keys)
            waiting = [item for item in self._queue if self._is_terminated(item.turn)]
            self._queue = [item for item in self._queue if not self._is_terminated(item.turn)]
            heapq.heapify(self._queue)
            searched = [item for item in waiting if item.started]
            self._finishing.extend(searched)  # the worker answers from their trees (it owns the evaluators)
            self._lock.notify_all()
        for item in waiting:
            if not item.started:
                self.write({"id": item.turn.query_id, "isDuringSearch": False, "noResults": True,
                            "turnNumber": item.turn.number})

    def _is_terminated(self, turn: Turn) -> bool:
        return (turn.query_id, None) in self._terminated or (turn.query_id, turn.number) in self._terminated

    def _push(self, item: _Item) -> None:
        item.sort_key = (-item.turn.priority, next(self._order))
        heapq.heappush(self._queue, item)

    # -- the worker -----------------------------------------------------------------------------------

    def _work(self) -> None:
        while True:
            with self._lock:
                while not self._queue and not self._finishing and not self._closing:
                    self._lock.wait()
                finishing, self._finishing = self._finishing, []
                if not finishing and (not self._queue or self._quit_now):
                    return
                batch = [] if finishing else self._take_batch()
            try:
                if finishing:
                    self._answer(finishing, during=False)
                else:
                    self._analyse_batch(batch)
            except Exception as e:  # a bug must not stop the engine: report it for these turns
                for item in finishing or batch:
                    self.write({"error": f"internal error: {type(e).__name__}: {shown(str(e))}",
                                "id": item.turn.query_id})

    def _take_batch(self) -> list[_Item]:
        """Every waiting turn of the top priority and the first one's board size, up to the batch size."""
        first = heapq.heappop(self._queue)
        batch = [first]
        keep: list[_Item] = []  # other priorities and sizes: back to the queue
        size = first.turn.position.game.size
        while self._queue and len(batch) < self.batch:
            item = heapq.heappop(self._queue)
            same = item.turn.priority == first.turn.priority and item.turn.position.game.size == size
            (batch if same else keep).append(item)
        for item in keep:
            heapq.heappush(self._queue, item)
        return batch

    def _evaluator(self, size: int):
        with self._lock:
            if size not in self._evaluators:
                self._evaluators[size] = make_evaluator(self.nets.net(size), self.seed)
            return self._evaluators[size]

    def _stopper(self, items: list[_Item], fired: list[bool]):
        """on_step for a batch: stop at the earliest deadline, on quit, or when every turn is terminated."""
        start = time.monotonic()
        deadline = min((start + i.turn.max_time - i.searched for i in items if i.turn.max_time is not None),
                       default=None)

        def stop() -> bool:
            if deadline is not None and time.monotonic() > deadline:
                fired[0] = True
            else:
                with self._lock:
                    fired[0] = self._quit_now or all(self._is_terminated(i.turn) for i in items)
            return fired[0]
        return stop

    def _analyse_batch(self, batch: list[_Item]) -> None:
        """One search of every turn of ``batch`` together: a plain turn's whole search, a reporting
        turn's next round, each on its own tree (made in its first batch, kept until it answers);
        finished turns answer, the others report and go back to the queue."""
        start = time.monotonic()
        evaluator = self._evaluator(batch[0].turn.position.game.size)
        fresh = [item for item in batch if not item.started]
        if fresh:
            trees = start_searches([item.turn.position for item in fresh], evaluator, self.seed,
                                   allow=[item.turn.allow for item in fresh])
            for item, tree in zip(fresh, trees, strict=True):
                item.started, item.tree = True, tree
        targets = [_round_visits(item) for item in batch]
        cut = [False]
        search_on([item.tree for item in batch], evaluator, targets, on_step=self._stopper(batch, cut))
        now = time.monotonic()
        finished, reports, again = [], [], []
        for item, target in zip(batch, targets, strict=True):
            item.searched += now - start
            turn = item.turn
            visits = 0 if item.tree is None else item.tree.visits()
            with self._lock:
                stopped = self._is_terminated(turn) or self._quit_now
            out_of_time = turn.max_time is not None and item.searched >= turn.max_time
            stuck = visits < target and not cut[0]  # (a search never cut reaches its visits)
            if item.tree is None or visits >= turn.visits or stopped or out_of_time or stuck:
                finished.append(item)
                continue
            if turn.report_every is not None and now - item.last_report >= turn.report_every:
                item.last_report = now
                reports.append(item)
            again.append(item)  # a round, or a search another turn's deadline cut short
        self._answer(finished, during=False)
        self._answer(reports, during=True)
        with self._lock:
            for item in again:
                self._push(item)
            self._lock.notify_all()

    def _answer(self, items: list[_Item], during: bool) -> None:
        """The responses of ``items`` read from their trees; final ones (not ``during``) let the tree go."""
        if not items:
            return
        by_size: dict[int, list[_Item]] = {}
        for item in items:
            by_size.setdefault(item.turn.position.game.size, []).append(item)
        for size, group in by_size.items():
            evaluator = self._evaluator(size)
            analyses = read_analyses([item.turn.position for item in group], [item.tree for item in group],
                                     evaluator)
            for item, analysis in zip(group, analyses, strict=True):
                self.write(self.response(item.query, item.turn, analysis, during))
                if not during:
                    self.positions_analysed += 1
                    item.tree = None

    # -- output ---------------------------------------------------------------------------------------

    def response(self, query: Query, turn: Turn, analysis: PositionAnalysis, during: bool) -> dict:
        """KataGo's response object for one analysed turn."""
        game = turn.position.game
        sign = flip_sign(analysis.to_move, query.perspective, BLACK)
        vertex = game.action_to_vertex
        out: dict[str, Any] = {
            "id": query.id, "isDuringSearch": during, "turnNumber": turn.number,
            "moveInfos": [_rounded(move_fields(m, vertex, sign, query.include_pv_visits))
                          for m in analysis.moves],
            "rootInfo": _rounded(root_fields(analysis, sign)),
        }
        out["rootInfo"]["currentPlayer"] = "B" if analysis.to_move == BLACK else "W"
        if query.include_ownership and analysis.ownership is not None:
            out["ownership"] = json_numbers(board_order(sign * analysis.ownership, game.size))
        if query.include_policy:
            out["policy"] = json_numbers(policy_order(analysis.policy, game.size))
        return out

    def write(self, obj: dict) -> None:
        line = json.dumps(obj, separators=(",", ":")) + "\n"
        with self._write_lock:
            try:
                self.out.write(line)
                self.out.flush()
            except (BrokenPipeError, ValueError):
                pass  # the client went away


def _round_visits(item: _Item) -> int:
    """The visits ``item``'s tree searches to in this batch: all asked for a plain turn; a reporting
    turn's next round doubles what it has (at least :data:`FIRST_ROUND_VISITS`)."""
    turn = item.turn
    if turn.report_every is None:
        return turn.visits
    have = 0 if item.tree is None else item.tree.visits()
    return min(turn.visits, max(FIRST_ROUND_VISITS, 2 * have))


def _rounded(fields: dict) -> dict:
    return {k: round(v, 6) if isinstance(v, float) else v for k, v in fields.items()}


class NetFinder:
    """The net for each board size: the one given (its size only), or the shipped net of each size."""

    def __init__(self, net=None, net_name: str = "", loader=None):
        self._net = net
        self._name = net_name
        self._loader = loader  # size -> net or None (the shipped nets)
        self._nets: dict[int, Any] = {}

    def check_size(self, size: int) -> None:
        """ValueError naming the net when no net serves ``size``."""
        self.net(size)

    def net(self, size: int):
        if self._net is not None:
            if not self._net.serves_size(size):
                raise ValueError(f"the net {self._name} plays {self._net.size}x{self._net.size}, "
                                 f"not {size}x{size}")
            return self._net
        if size not in self._nets:
            net = self._loader(size) if self._loader else None
            if net is None:
                raise ValueError(f"zero9 has no Go net for {size}x{size} (give one with -model)")
            self._nets[size] = net
        return self._nets[size]
