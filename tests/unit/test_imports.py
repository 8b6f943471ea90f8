"""The import graph of memq's folders as their files spell it: every import statement at any
depth (a function's lazy import, one under ``if TYPE_CHECKING:`` too), relative ones resolved
to module names. Imports run one way, ``schemas`` <- ``pipeline`` <- ``workers``, and down the
layer table of ARCHITECTURE.md; no module imports one that imports it back, however lazily;
importing a ``workers`` module does not build the Celery app unless the module defines tasks."""

from __future__ import annotations

import ast
import fnmatch
import json
import re
import subprocess
import sys
from collections import deque
from pathlib import Path

import pytest

import memq

ROOT = Path(memq.__file__).resolve().parent  # the package memq: the checkout's root
FOLDERS = ("schemas", "pipeline", "workers")
# the modules that define Celery tasks: importing them builds the app (workers.app)
TASK_MODULES = ("memq.workers.app", "memq.workers.tasks", "memq.workers.lifecycle")
# Celery's transport and strategy, as workers.app names them: Celery, but not the app
CELERY_BOUND = ("memq.workers.broker",)

Graph = dict[str, dict[str, int]]  # module -> {module it imports: line of the first import}


def modules(root: Path = ROOT) -> dict[str, Path]:
    """memq's modules (the root package and every module of its folders) and their files."""
    found = {"memq": root / "__init__.py"}
    for folder in FOLDERS:
        for path in sorted((root / folder).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(("memq", *parts))] = path
    return found


def imports(name: str, path: Path, known: set[str]) -> dict[str, int]:
    """The modules of ``known`` that module ``name`` (its file ``path``) imports anywhere,
    each with the line of its first import."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: dict[str, int] = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1]
                                + ([node.module] if node.module else []))
            # ``from . import wiring`` names a module, ``from .coord import Coord`` a name of one
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                       for alias in node.names]
        else:
            continue
        for target in targets:
            if target in known and target != name:
                found[target] = min(found.get(target, node.lineno), node.lineno)
    return found


def graph() -> Graph:
    found = modules()
    return {name: imports(name, path, set(found)) for name, path in found.items()}


def strongly_connected(g: Graph) -> list[list[str]]:
    """Each set of two or more modules that reach one another (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in g[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            members = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                members.append(w)
                if w == v:
                    break
            if len(members) > 1:
                out.append(sorted(members))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def loop(g: Graph, members: list[str]) -> str:
    """A shortest cycle through the first of ``members`` (a strongly connected set), as
    ``module:line -> module:line -> ...``: each line is where the module imports the next."""
    start, inside = members[0], set(members)
    came: dict[str, str] = {}
    todo = deque([start])
    while todo:
        v = todo.popleft()
        for w in sorted(g[v]):
            if w == start:
                path = [v]
                while path[-1] != start:
                    path.append(came[path[-1]])
                path.reverse()
                steps = [f"{a}:{g[a][b]}" for a, b in zip(path, [*path[1:], start], strict=True)]
                return f"{len(members)} modules, e.g. " + " -> ".join([*steps, start])
            if w in inside and w not in came:
                came[w] = v
                todo.append(w)
    raise AssertionError(f"{members} is not strongly connected")


def test_the_reader_sees_every_import(tmp_path: Path) -> None:
    source = tmp_path / "a.py"
    source.write_text("from typing import TYPE_CHECKING\n"
                      "from . import b\n"
                      "if TYPE_CHECKING:\n"
                      "    from .c import Thing\n"
                      "def f() -> None:\n"
                      "    from ..pipeline import p\n"
                      "    import memq.workers.c, json\n"
                      "    from .. import __version__\n")
    known = {"memq", "memq.workers", "memq.workers.a", "memq.workers.b", "memq.workers.c",
             "memq.pipeline", "memq.pipeline.p"}
    assert imports("memq.workers.a", source, known) == {
        "memq.workers.b": 2, "memq.workers.c": 4, "memq.pipeline.p": 6, "memq": 8}
    assert strongly_connected({"a": {"b": 1}, "b": {"c": 2}, "c": {"a": 3, "d": 4}, "d": {}}) \
        == [["a", "b", "c"]]
    assert loop({"a": {"b": 1}, "b": {"a": 7}}, ["a", "b"]) == "2 modules, e.g. a:1 -> b:7 -> a"


def test_the_root_imports_alone() -> None:
    """pytest imports the checkout's root ``__init__.py`` under its folder's name, which need
    not be ``memq`` nor an identifier: it must import outside its package."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("not-memq", ROOT / "__init__.py")
    assert spec is not None and spec.loader is not None
    spec.loader.exec_module(importlib.util.module_from_spec(spec))


def test_no_import_cycle() -> None:
    g = graph()
    assert g.get("memq.workers.tasks"), "the reader found no imports"
    cycles = [loop(g, members) for members in strongly_connected(g)]
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


@pytest.mark.parametrize(("lower", "higher"), [("schemas", ("pipeline", "workers")),
                                              ("pipeline", ("workers",))])
def test_imports_run_one_way(lower: str, higher: tuple[str, ...]) -> None:
    def within(name: str, folder: str) -> bool:
        return name == f"memq.{folder}" or name.startswith(f"memq.{folder}.")

    wrong = [f"{name}:{line} imports {target}" for name, found in graph().items()
             if within(name, lower) for target, line in found.items()
             if any(within(target, folder) for folder in higher)]
    assert not wrong, "\n".join(wrong)


def layers(text: str) -> list[tuple[str, list[str]]]:
    """The layer table of ARCHITECTURE.md, top to bottom: each row's name and the file patterns
    it names (backquoted paths with a folder, and the root's ``__init__.py``)."""
    section = text.split("| layer, top to bottom |", 1)[1].split("\n\n", 1)[0]
    rows = []
    for line in section.splitlines()[2:]:
        name, files = line.strip("|").split("|", 1)
        patterns = [p for p in re.findall(r"`([^`]+\.py)`", files)
                    if "/" in p or p == "__init__.py"]
        rows.append((name.strip(), patterns))
    return rows


def test_the_layer_reader() -> None:
    text = ("intro\n\n| layer, top to bottom | its modules |\n|---|---|\n"
            "| top | `__init__.py`: the face, `x.py` |\n"
            "| low | `workers/*.py`, the rest |\n\nafter")
    assert layers(text) == [("top", ["__init__.py"]), ("low", ["workers/*.py"])]


def test_imports_follow_the_layers_of_the_architecture_page() -> None:
    rows = layers((ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8"))
    assert len(rows) > 5, "the layer table of ARCHITECTURE.md was not found"

    def row(path: Path) -> int:
        rel = path.relative_to(ROOT).as_posix()
        found = next((i for i, (_, patterns) in enumerate(rows)
                      if any(fnmatch.fnmatch(rel, p) for p in patterns)), None)
        assert found is not None, f"{rel} is on no row of ARCHITECTURE.md's layer table"
        return found

    files = modules()
    rank = {name: row(path) for name, path in files.items()}
    up = [f"{name}:{line} ({rows[rank[name]][0]}) imports {target} ({rows[rank[target]][0]})"
          for name, found in graph().items() for target, line in found.items()
          if rank[target] < rank[name]]
    assert not up, "imports up the layers of ARCHITECTURE.md:\n" + "\n".join(up)


# One fresh process imports the modules in turn: sys.modules only grows, so the first module
# after whose import a name is there is the one that pulled it in.
_PROBE = """
import importlib, json, sys
seen = {}
for name in sys.argv[1:]:
    importlib.import_module(name)
    seen[name] = [m for m in ("celery", "memq.workers.app") if m in sys.modules]
print(json.dumps(seen))
"""


def test_importing_a_workers_module_does_not_build_the_celery_app() -> None:
    workers = [name for name in modules() if name.startswith("memq.workers.")]
    assert set(TASK_MODULES) | set(CELERY_BOUND) <= set(workers)
    light = [name for name in workers if name not in TASK_MODULES + CELERY_BOUND]
    done = subprocess.run([sys.executable, "-c", _PROBE, *light, *CELERY_BOUND],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    seen: dict[str, list[str]] = json.loads(done.stdout.splitlines()[-1])
    heavy = next((name for name in light if seen[name]), None)
    assert heavy is None, f"importing {heavy} imports {' and '.join(seen[heavy])}"
    app = [name for name in CELERY_BOUND if "memq.workers.app" in seen[name]]
    assert not app, f"importing {app[0]} builds the Celery app (memq.workers.app)"
