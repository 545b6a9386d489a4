"""The package's shape: folders are layers, imports go one way, no circles.

Layers, lowest first (a module may import its own layer and the ones below):
``util``, then ``games`` -> ``nn`` -> ``search`` -> ``arena`` -> ``learn`` ->
``protocols`` -> ``distributed``, with ``cli`` and the ``gui`` package on top. Command-line
parsing (argparse) lives in ``cli``: the library below takes plain arguments or settings.
``zero9/__init__.py`` (the version) and ``zero9/settings.py`` (every default) import
nothing of zero9, so every layer may read them.

Imports inside functions are kept for what is optional or slow to load on purpose:
the optional dependencies (ray, pygame, matplotlib, the server's web stack, selenium),
zero9 modules that pull one of those in, and the CLI's lazy loading of its subcommands.
Parts that talk through interfaces (:data:`INTERFACE_PACKAGES`: the GTP engine's objects and
command groups) reach one another only by public names: no ``other._private``.
Run this file as a script to print the import graph's summary.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ["util", "games", "nn", "search", "arena", "learn", "protocols", "distributed"]
BASE_MODULES = {"zero9", "zero9.settings"}  # import nothing of zero9; every layer may use them
TOP_MODULES = {"zero9.cli", "zero9.__main__"}  # and every zero9.cli.* module
# Third-party packages that are optional or heavy to load: importing them inside a function is allowed.
OPTIONAL_PACKAGES = {"ray", "pygame", "matplotlib", "fastapi", "starlette", "uvicorn", "sqlalchemy",
                     "selenium", "psycopg", "multipart", "httpx", "sgfmill",
                     "libs",  # libs: gomokubench's module (an optional match opponent)
                     "numba"}  # the search's fast path: zero9 runs the Python one without it
# zero9 modules that pull in one of those: they too may be imported inside a function.
OPTIONAL_MODULES = {"zero9.learn.cluster.pool", "zero9.learn.loop.plot", "zero9.distributed.server",
                    "zero9.distributed.web", "zero9.distributed.db", "zero9.distributed.roster", "gui.app",
                    "zero9.search.native", "zero9.search.forest"}
# learn's rooms, lowest first: the run directory is their common floor; self-play and training stand
# side by side (neither imports the other); the Ray cluster plays through self-play; the loop uses all.
LEARN_ROOMS = [{"rundir"}, {"selfplay", "training"}, {"cluster"}, {"loop"}]
MAX_FUNCTION_IMPORTS = 30
MAX_LOOSE_MODULES = 4
# The command line belongs to zero9.cli: library modules take plain arguments or the settings
# dataclasses (issue 34). A module that must parse options below zero9.cli would be named here.
ARGPARSE_BELOW_CLI: set[str] = set()
# Packages made of objects with typed interfaces (issue 43): a module there touches a private name
# (``x._name``) only on ``self``; the other objects' public methods are the contract.
INTERFACE_PACKAGES = ["zero9/protocols/gtp"]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer_of(module: str) -> int:
    """Index of a module's layer: -1 for the base modules, len(LAYERS) for the top."""
    if module in BASE_MODULES:
        return -1
    parts = module.split(".")
    if parts[0] == "gui" or module in TOP_MODULES or module.startswith("zero9.cli."):
        return len(LAYERS)
    if len(parts) >= 2 and parts[1] in LAYERS:
        return LAYERS.index(parts[1])
    raise AssertionError(f"{module} is in no layer")


def imports_of(path: Path) -> list[tuple[str, bool, int]]:
    """(imported module, inside a function?, line) for every import in a file; ``from zero9.x import y``
    names ``zero9.x.y`` when that is a module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if isinstance(child, ast.Import):
                found.extend((alias.name, in_function, child.lineno) for alias in child.names)
            elif isinstance(child, ast.ImportFrom) and child.module and child.level == 0:
                for alias in child.names:
                    full = f"{child.module}.{alias.name}"
                    found.append((full if module_file(full) else child.module, in_function, child.lineno))
            visit(child, inner)

    visit(tree, False)
    return found


def module_file(module: str) -> Path | None:
    base = ROOT.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def package_files() -> list[Path]:
    return sorted(p for folder in ("zero9", "gui") for p in (ROOT / folder).rglob("*.py"))


def graph() -> tuple[dict[str, set[str]], list[tuple[str, str, int]]]:
    """Module-level edges between our modules, and every import made inside a function."""
    edges: dict[str, set[str]] = {}
    in_functions = []
    for path in package_files():
        name = module_name(path)
        edges.setdefault(name, set())
        for target, inside, line in imports_of(path):
            ours = target.split(".")[0] in ("zero9", "gui")
            if inside:
                in_functions.append((name, target, line))
            if ours:
                edges[name].add(target)
    return edges, in_functions


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def dfs(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in edges:
                continue
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (cycle := dfs(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (cycle := dfs(node)):
            return cycle
    return None


def folder_of(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "zero9" and len(parts) > 2 else module


def test_imports_go_down_the_layers() -> None:
    edges, _ = graph()
    upward = [f"{a} -> {b}" for a, targets in edges.items() for b in targets
              if b in edges and layer_of(b) > layer_of(a)]
    assert not upward, "imports that go up a layer:\n" + "\n".join(sorted(upward))


def test_no_circle_between_files_or_folders() -> None:
    edges, _ = graph()
    assert find_cycle(edges) is None, f"a circle of imports: {' -> '.join(find_cycle(edges))}"
    folders: dict[str, set[str]] = {}
    for a, targets in edges.items():
        for b in targets:
            if b in edges and folder_of(a) != folder_of(b):
                folders.setdefault(folder_of(a), set()).add(folder_of(b))
    assert find_cycle(folders) is None, f"a circle between folders: {' -> '.join(find_cycle(folders))}"


def test_imports_inside_functions_are_only_for_optional_parts() -> None:
    _, inside = graph()
    bad = [f"{m}:{line} imports {t}" for m, t, line in inside
           if t.split(".")[0] not in OPTIONAL_PACKAGES and t not in OPTIONAL_MODULES
           and not (m == "zero9.cli" and t == "importlib")]
    assert not bad, "imports inside functions that could be at the top:\n" + "\n".join(bad)
    statements = {(m, line) for m, _, line in inside}
    assert len(statements) <= MAX_FUNCTION_IMPORTS, f"{len(statements)} import statements inside functions"


def test_the_command_line_is_parsed_only_in_the_cli_layer() -> None:
    parsing = {module_name(path) for path in package_files()
               if layer_of(module_name(path)) < len(LAYERS)
               and any(target == "argparse" for target, _, _ in imports_of(path))}
    assert parsing <= ARGPARSE_BELOW_CLI, f"argparse below zero9.cli: {sorted(parsing - ARGPARSE_BELOW_CLI)}"
    assert parsing == ARGPARSE_BELOW_CLI, f"no longer parses its options, drop it from the set: " \
        f"{sorted(ARGPARSE_BELOW_CLI - parsing)}"


def private_reaches(source: str, label: str) -> list[str]:
    """``label:line: expression`` for each private name (``x._name``, dunders aside) that ``source``
    reaches on another object, or on ``self`` in a class that does not define it (a mixin's call
    into its sibling's private method)."""
    tree = ast.parse(source)
    found = []

    def private(node: ast.Attribute) -> bool:
        return node.attr.startswith("_") and not node.attr.startswith("__")

    def on_self(node: ast.Attribute) -> bool:
        return isinstance(node.value, ast.Name) and node.value.id == "self"

    own: dict[int, set[str]] = {}  # id of a self._x node -> the private names its class defines
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        defined = {n.name for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        defined |= {t.attr for n in ast.walk(cls) if isinstance(n, (ast.Assign, ast.AnnAssign))
                    for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
                    if isinstance(t, ast.Attribute) and on_self(t)}
        for n in ast.walk(cls):
            if isinstance(n, ast.Attribute) and private(n) and on_self(n):
                own[id(n)] = defined
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and private(node)):
            continue
        if not on_self(node) or node.attr not in own.get(id(node), set()):
            found.append(f"{label}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_interface_packages_reach_no_private_name_of_another_object() -> None:
    files = [p for folder in INTERFACE_PACKAGES for p in sorted((ROOT / folder).rglob("*.py"))]
    assert files, f"no module in {INTERFACE_PACKAGES}"
    bad = [reach for path in files
           for reach in private_reaches(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))]
    assert not bad, "private names reached on another object:\n" + "\n".join(bad)


def test_private_reaches_are_found() -> None:
    """The check above can fail: a mixin-style call into another part's private method is caught."""
    sample = ("class A:\n    def f(self):\n        return self.state._say('x'), self._own(), self.__class__\n"
              "    def _own(self):\n        self._x = 1\n        return self._x + self._sibling()\n")
    assert private_reaches(sample, "sample") == ["sample:3: self.state._say", "sample:6: self._sibling"]


def learn_room(module: str) -> tuple[str, int]:
    """(room, level) of a ``zero9.learn`` module; the room is the sub-package, or ``rundir``."""
    room = module.split(".")[2]
    levels = [i for i, rooms in enumerate(LEARN_ROOMS) if room in rooms]
    assert levels, f"{module} is in no room of learn/ (LEARN_ROOMS)"
    return room, levels[0]


def test_learn_is_rooms_whose_imports_go_down() -> None:
    loose = sorted(p.name for p in (ROOT / "zero9" / "learn").glob("*.py")
                   if p.stem not in ("__init__", "rundir"))
    assert not loose, f"modules loose in learn/, outside its rooms: {loose}"
    edges, _ = graph()
    bad = []
    for a, targets in edges.items():
        if not a.startswith("zero9.learn."):
            continue
        for b in targets:
            if b.startswith("zero9.learn.") and b in edges:
                (room_a, level_a), (room_b, level_b) = learn_room(a), learn_room(b)
                if room_a != room_b and level_b >= level_a:
                    bad.append(f"{a} -> {b}")
    assert not bad, "imports between learn's rooms that do not go down:\n" + "\n".join(sorted(bad))


def test_few_modules_loose_at_the_top() -> None:
    loose = sorted(p.name for p in (ROOT / "zero9").glob("*.py"))
    assert len(loose) <= MAX_LOOSE_MODULES, loose
    for folder in LAYERS:
        assert (ROOT / "zero9" / folder / "__init__.py").is_file(), f"zero9/{folder} has no __init__.py"


if __name__ == "__main__":
    edges, inside = graph()
    count = sum(len(t) for t in edges.values())
    statements = sorted({(m, line): t for m, t, line in inside}.items())
    print(f"{len(edges)} modules, {count} imports between them, {len(statements)} import statements "
          f"inside functions")
    for (m, line), t in statements:
        print(f"  inside a function: {m}:{line} -> {t}")
    sys.exit(0)
