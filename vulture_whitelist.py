"""Names vulture takes for dead that are not, each with its reason (``pyproject.toml`` [tool.vulture] runs
vulture on zero9/, gui/, scripts/ and tests/ with this file, which it reads as code that uses them;
nothing imports it). A name goes here only with the reason it lives; dead code is deleted instead.
"""
# ruff: noqa: F821, B018

# numpy: ``array.flags.writeable = False`` makes a shared table read-only (search/puct.py, search/native.py,
# search/evaluator.py, games/go_native.py, games/gomoku_native.py)
_.writeable
# learn/selfplay/pool.py SelfPlayStats: written to logs/selfplay.jsonl (dataclasses.asdict), read back from
# the log by learn/loop/plot.py and named in docs/run-directory.md
_.no_resign_games
_.false_resigns
# protocols/analysis_engine.py _Item: a dataclass(order=True) field, what the priority queue orders by
_.sort_key
# distributed/web.py: Starlette's cached request body, which request.form() then parses
_._body
# distributed/edge.py: uvicorn loads the protocol class by its dotted name (edge.PROTOCOL)
GuardedH11Protocol
GuardedHttpToolsProtocol
# distributed/web.py: uvicorn's app factory, named "zero9.distributed.web:app_from_environment"
app_from_environment
# tests/test_server_flow.py: selenium's ChromeOptions reads it
_.binary_location
# tests/test_ray.py: a pytest fixture asked for by name, for what it sets up (a Ray cluster)
ray_cluster

# distributed/client.py: urllib's OpenerDirector calls a handler's <scheme>_open by name
_.http_open
_.https_open
# protocols/kata_format.py: reprlib.Repr's limits, read by reprlib when it shortens a value
_.maxlevel
_.maxstring
_.maxother
_.maxlong
_.maxlist
_.maxdict
_.maxtuple
# tests/test_interrupts.py: an autouse fixture, which pytest runs around each test without its name
ctrl_c_as_a_command_has_it
