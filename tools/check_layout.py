#!/usr/bin/env python3
"""Checks the source layout that docs/architecture.md describes ("Module map").

1. One target per folder: every folder of C++ sources outside tests/ holds exactly one CMake target
   (a library made with kforge_add_library, or an executable), except that a library's folder may
   also hold the main.cpp of the one executable built over it (app/: kforge_app + kernelforge).
2. The folder graph has no cycle: folder A depends on folder B when a file of A includes a header
   of B ("B/Header.h", B's include prefix). A cycle between libraries would also break the build;
   this names it.

Prints one line per problem and exits 1, or prints a summary and exits 0.
Usage: tools/check_layout.py [SOURCE_ROOT]
"""
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
SOURCE_TOPS = ["core", "app", "views", "cli", "runtime", "cast_run", "worker", "nvrtc"]
TARGET_RE = re.compile(r"^\s*(kforge_add_library|add_executable)\(\s*([\w-]+)", re.M)
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def source_folders():
    """Folders with .cpp/.h files, each with the folder whose CMakeLists.txt builds it."""
    found = {}
    for top in SOURCE_TOPS:
        for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
            if any(f.endswith((".cpp", ".h")) for f in files):
                rel = os.path.relpath(dirpath, ROOT)
                found[rel] = files
    return found


def targets_of(folder):
    cmake = os.path.join(ROOT, folder, "CMakeLists.txt")
    if not os.path.exists(cmake):
        return []
    return TARGET_RE.findall(open(cmake, encoding="utf-8").read())


def owner(folder, folders):
    """The folder whose target builds `folder`: itself, or the nearest parent with a CMakeLists.txt
    whose target lists files of the subfolder (views/<pane>)."""
    probe = folder
    while probe:
        if targets_of(probe):
            return probe
        probe = os.path.dirname(probe)
    return None


def main():
    problems = []
    folders = source_folders()
    if not folders:
        print(f"no C++ sources under {ROOT}")
        return 1
    owners = {}
    for folder in sorted(folders):
        home = owner(folder, folders)
        if home is None:
            problems.append(f"{folder}: no CMakeLists.txt builds it")
            continue
        owners[folder] = home
        if home != folder:
            continue
        targets = targets_of(folder)
        libraries = [name for kind, name in targets if kind == "kforge_add_library"]
        executables = [name for kind, name in targets if kind == "add_executable"]
        if len(targets) == 1:
            continue
        if len(libraries) == 1 and len(executables) == 1:
            continue  # a library and the executable of its main.cpp
        problems.append(f"{folder}: {len(targets)} targets ({', '.join(n for _, n in targets)}); one per folder")

    # Include prefix of each library folder: its folder name ("core/search" -> "search").
    prefix = {}
    for folder in owners.values():
        for kind, _ in targets_of(folder):
            if kind == "kforge_add_library":
                prefix[os.path.basename(folder)] = folder
    graph = {home: set() for home in set(owners.values())}
    for folder, files in folders.items():
        home = owners.get(folder)
        if home is None:
            continue
        for name in files:
            if not name.endswith((".cpp", ".h")):
                continue
            text = open(os.path.join(ROOT, folder, name), encoding="utf-8").read()
            for include in INCLUDE_RE.findall(text):
                first = include.split("/")[0]
                if "/" in include and first in prefix and prefix[first] != home:
                    graph[home].add(prefix[first])

    state = {}
    cycles = []

    def visit(node, path):
        state[node] = "open"
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                cycles.append(path[path.index(nxt):] + [nxt] if nxt in path else path + [nxt])
            elif nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    for cycle in cycles:
        problems.append("folder cycle: " + " -> ".join(cycle))

    for problem in problems:
        print(problem)
    if problems:
        return 1
    edges = sum(len(v) for v in graph.values())
    print(f"layout ok: {len(graph)} target folders, {edges} folder dependencies, no cycle")
    return 0


if __name__ == "__main__":
    sys.exit(main())
