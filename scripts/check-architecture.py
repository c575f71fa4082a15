#!/usr/bin/env python3
"""Checks that the code matches ARCHITECTURE.md (issue #14: the build checks the house).

1. Every module's `import`s under Sources/ are among what ARCHITECTURE.md's module table says
   it knows about (the "knows about" column), and among its dependencies in Package.swift.
2. Every dependency Package.swift gives a module is one the table allows.
3. Every test target's imports are among its dependencies in Package.swift.
4. Every path named in ARCHITECTURE.md's tables exists.

Usage: scripts/check-architecture.py [ROOT]   (ROOT: the repository, default: this script's)
Exit status 0 when all hold, 1 with one line per violation on stderr otherwise.
Package.swift is read as text (no `swift package`, which waits for a running build's lock):
each `.target(name: "X", dependencies: [...])` entry, with products named by their
`.product(name: ...)`.
"""
import glob
import os
import re
import sys

# Modules of the toolchain and the system: any module may import them.
SYSTEM_MODULES = {"Glibc", "Darwin", "Musl", "Synchronization", "Dispatch", "FoundationEssentials",
                  "Foundation", "Testing", "_Concurrency"}
# The table names packages; code imports their products.
PACKAGE_PRODUCTS = {"swift-log": {"Logging"}, "swift-crypto": {"Crypto", "CryptoExtras"},
                    "swift-argument-parser": {"ArgumentParser"}}
# Words in the "knows about" column that name no module.
NOT_MODULES = {"C"}
PATH_EXTENSIONS = (".swift", ".md", ".py", ".sh", ".h", ".json", ".yaml", ".modulemap")

IMPORT = re.compile(r"^[ \t]*(?:@\w+[ \t]+)*(?:(?:public|internal|package|private|fileprivate)[ \t]+)?import[ \t]+"
                    r"(?:(?:typealias|struct|class|enum|protocol|let|var|func)[ \t]+)?([A-Za-z_]\w*)", re.M)


def package_targets(root):
    """{target: (kind, directory, set of dependency module names)} from Package.swift."""
    text = open(os.path.join(root, "Package.swift")).read()
    targets = {}
    for match in re.finditer(r"\.(target|testTarget|executableTarget|systemLibrary)\(\s*name:\s*\"(\w+)\"", text):
        kind, name = match.groups()
        body = entry_text(text, match.start())
        deps = set()
        dep_list = re.search(r"dependencies:\s*\[", body)
        if dep_list:
            listing = bracketed(body, dep_list.end() - 1)
            deps |= set(re.findall(r"\.product\(\s*name:\s*\"(\w+)\"", listing))
            deps |= set(re.findall(r"(?<![\w:])\s*\"(\w+)\"(?!\s*\))", re.sub(r"\.product\([^)]*\)", "", listing)))
        path = re.search(r"path:\s*\"([^\"]+)\"", body)
        folder = "Tests" if kind == "testTarget" else "Sources"
        targets[name] = (kind, path.group(1) if path else f"{folder}/{name}", deps)
    return targets


def entry_text(text, start):
    """The text of the call starting at `start` (up to its closing parenthesis)."""
    return bracketed(text, text.index("(", start))


def bracketed(text, open_index):
    pairs = {"(": ")", "[": "]"}
    closer, depth = pairs[text[open_index]], 0
    for index in range(open_index, len(text)):
        if text[index] == text[open_index]:
            depth += 1
        elif text[index] == closer:
            depth -= 1
            if depth == 0:
                return text[open_index:index + 1]
    return text[open_index:]


def imports_of(root, directory):
    """{module: first file importing it} for the Swift files under `directory`."""
    found = {}
    for path in sorted(glob.glob(os.path.join(root, directory, "**", "*.swift"), recursive=True)):
        code = re.sub(r'"""[\s\S]*?"""', '""', open(path).read())  # not inside multi-line strings
        for module in IMPORT.findall(code):
            found.setdefault(module, os.path.relpath(path, root))
    return found


def markdown_tables(text):
    """Each table as (header cells, rows of cells)."""
    tables, current = [], None
    for line in text.splitlines():
        if line.startswith("|"):
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            if current is None:
                current = (cells, [])
                tables.append(current)
            elif not all(re.fullmatch(r":?-+:?", cell) for cell in cells):
                current[1].append(cells)
        else:
            current = None
    return tables


def module_table(tables):
    """{module: set of modules it may import} from the table with a "knows about" column."""
    for header, rows in tables:
        if "knows about" in header:
            column = header.index("knows about")
            allowed = {}
            for cells in rows:
                name = re.match(r"`([\w-]+)`", cells[0])
                if not name:
                    continue
                text = re.sub(r"\([^)]*\)", "", cells[column])  # drop remarks in parentheses
                words = set(re.findall(r"[\w-]+", text)) - NOT_MODULES
                modules = set()
                for word in words:
                    modules |= PACKAGE_PRODUCTS.get(word, {word})
                allowed[name.group(1)] = modules
            return allowed
    return None


def table_paths(root, tables, allowed):
    """The paths named in the tables that do not exist, with the row naming them."""
    missing = []
    for header, rows in tables:
        for cells in rows:
            module = re.match(r"`([\w-]+)`", cells[0])
            base = f"Sources/{module.group(1)}" if module and module.group(1) in allowed else ""
            for cell in cells:
                directory = base
                for token in re.findall(r"`([^`]+)`", cell):
                    if "/" not in token and not token.endswith(PATH_EXTENSIONS):
                        continue
                    path = token if "/" in token or not directory else f"{directory}/{token}"
                    if not glob.glob(os.path.join(root, path)):
                        missing.append(f"ARCHITECTURE.md names `{token}` ({path}), which does not exist (row: {cells[0]})")
                    if "/" in token:
                        directory = path if path.endswith("/") or os.path.isdir(os.path.join(root, path)) else os.path.dirname(path)
                        directory = directory.rstrip("/")
    return missing


def check(root):
    problems = []
    architecture = open(os.path.join(root, "ARCHITECTURE.md")).read()
    tables = markdown_tables(architecture)
    allowed = module_table(tables)
    if allowed is None:
        return ["ARCHITECTURE.md has no module table with a \"knows about\" column"]
    targets = package_targets(root)
    for name, (kind, directory, deps) in sorted(targets.items()):
        if kind == "systemLibrary":
            continue
        imports = imports_of(root, directory)
        for module, path in sorted(imports.items()):
            if module in SYSTEM_MODULES or module == name:
                continue
            if module not in deps:
                problems.append(f"{path}: imports {module}, which is not a dependency of {name} in Package.swift")
            if kind != "testTarget" and name in allowed and module not in allowed[name]:
                problems.append(f"{path}: imports {module}, but ARCHITECTURE.md says {name} knows about only "
                                f"{', '.join(sorted(allowed[name])) or 'nothing'}")
        if kind == "testTarget":
            continue
        table_name = name if name in allowed else os.path.basename(directory)
        if table_name not in allowed:
            problems.append(f"Package.swift: module {name} has no row in ARCHITECTURE.md's module table")
            continue
        for dep in sorted(deps - allowed[table_name]):
            if dep not in allowed[table_name] and not (targets.get(dep, ("",))[0] == "systemLibrary"
                                                         and f"`{dep}`" in row_text(tables, table_name)):
                problems.append(f"Package.swift: {name} depends on {dep}, which ARCHITECTURE.md's module table does not "
                                f"list in {table_name}'s \"knows about\"")
    for name in sorted(allowed):
        if name not in targets and not any(os.path.basename(t[1]) == name for t in targets.values()):
            problems.append(f"ARCHITECTURE.md's module table lists {name}, which Package.swift does not declare")
    problems += table_paths(root, tables, allowed)
    return problems


def row_text(tables, module):
    for header, rows in tables:
        for cells in rows:
            if cells[0].startswith(f"`{module}`"):
                return " | ".join(cells)
    return ""


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    problems = check(root)
    for problem in problems:
        print(f"check-architecture: {problem}", file=sys.stderr)
    if problems:
        print(f"check-architecture: {len(problems)} problem(s); fix the code, Package.swift or ARCHITECTURE.md's tables",
              file=sys.stderr)
        return 1
    print("check-architecture: imports, Package.swift and ARCHITECTURE.md agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
