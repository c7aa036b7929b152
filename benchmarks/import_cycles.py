"""Import cycles of a checkout, counted on the graph import-linter builds (grimp): package pairs
that import each other (``domain`` taken as one package) and module import cycles (strongly
connected sets of modules). Lazy and ``TYPE_CHECKING`` imports count: they hold a cycle apart,
they do not remove it.

``PYTHONPATH=<checkout> python benchmarks/import_cycles.py`` (run it on two checkouts to compare).
"""

from __future__ import annotations

import collections
import sys

import grimp

ROOT = "veranda_dagster"


def _package(module: str) -> str:
    return ".".join(module.split(".")[:2])


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected sets of more than one module, iteratively."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in edges:
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                members = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    members.append(member)
                    if member == node:
                        break
                if len(members) > 1:
                    found.append(sorted(members))
    return found


def main() -> int:
    graph = grimp.build_graph(ROOT)
    edges = {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
    packages: dict[str, set[str]] = collections.defaultdict(set)
    for module, imported in edges.items():
        for other in imported:
            a, b = _package(module), _package(other)
            if a != b and a != ROOT:
                packages[a].add(b)
    pairs = sorted(
        {tuple(sorted((a, b))) for a in packages for b in packages[a] if a in packages.get(b, ())}
    )
    print(f"two-way package pairs: {len(pairs)}")
    for a, b in pairs:
        print(f"  {a} <-> {b}")
    cycles = _cycles(edges)
    print(f"module import cycles: {len(cycles)}")
    for members in cycles:
        print("  " + ", ".join(m.removeprefix(ROOT + ".") for m in members))
    return 0


if __name__ == "__main__":
    sys.exit(main())
