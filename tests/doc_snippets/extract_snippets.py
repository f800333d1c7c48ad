#!/usr/bin/env python3
"""Turns the code examples in README.md and the public headers into C++.

The convention (see tests/doc_snippets/README.md for the full text):
  * README.md: every ```cpp fenced block is one snippet; one opened by
    ```cpp run is also run when the executable runs (it must end by itself,
    and the Status it returns is the test's verdict).
  * Headers under include/hearth/: a comment line that is exactly
    `// Example:` or `// Example (<note>):`, at the start of the line, opens a
    snippet; its code is the lines right after it that start with `//   `
    (`//`, a space, and two spaces of indent), up to the first line that does
    not. `// Example (not compiled...)` marks a snippet that is counted and
    listed but not compiled. Any other comment line starting with `Example`
    is an error, so that a typo cannot hide a snippet.

Each component (core, reference, sim, cuda) gets one .cc file: every snippet
becomes the body of its own function, `absl::Status Run(HEARTH_DOC_PARAMS)`,
whose parameters are the names the component's prelude header provides.
`#include` lines of a snippet move to the top of the file. `#line` directives
point compiler errors at the README or header line of the snippet.
"""

import argparse
import pathlib
import re
import sys

EXAMPLE_OPEN = re.compile(r"^// Example(?: \((?P<note>[^)]*)\))?:$")
EXAMPLE_LIKE = re.compile(r"^\s*//\s*Example\b")
CODE_PREFIX = "//   "


class Snippet:
    def __init__(self, path, line, lines, compiled, runs=False):
        self.path = path          # absolute pathlib.Path
        self.line = line          # 1-based line of the snippet's first code line
        self.lines = lines        # code, with the comment prefix blanked out
        self.compiled = compiled
        self.runs = runs          # also run, not only compiled


def header_snippets(path):
    """The examples of one header, or raises ValueError on a malformed one."""
    text = path.read_text().splitlines()
    snippets = []
    for i, line in enumerate(text):
        if not EXAMPLE_LIKE.match(line):
            continue
        opened = EXAMPLE_OPEN.match(line)
        if not opened:
            raise ValueError(f"{path}:{i + 1}: example line does not follow the "
                             f"convention `// Example:` or `// Example (note):`")
        body = []
        for code in text[i + 1:]:
            if not code.startswith(CODE_PREFIX):
                break
            # Blank out `//` so that compiler columns match the header's.
            body.append("  " + code[2:])
        if not body:
            raise ValueError(f"{path}:{i + 1}: example has no `//   ` code lines")
        note = opened.group("note") or ""
        snippets.append(Snippet(path, i + 2, body, not note.startswith("not compiled")))
    return snippets


def readme_snippets(path):
    """Every ```cpp (compiled) and ```cpp run (compiled and run) fenced block."""
    snippets = []
    body = None
    for i, line in enumerate(path.read_text().splitlines()):
        fence = line.strip()
        if body is None and fence in ("```cpp", "```cpp run"):
            body, start, runs = [], i + 2, fence == "```cpp run"
        elif body is not None and fence == "```":
            if not body:
                raise ValueError(f"{path}:{start - 1}: empty cpp block")
            snippets.append(Snippet(path, start, body, True, runs))
            body = None
        elif body is not None:
            body.append(line)
        elif fence.startswith("```cpp"):
            raise ValueError(f"{path}:{i + 1}: a cpp block opens with ```cpp or "
                             f"```cpp run, not {fence!r}")
    if body is not None:
        raise ValueError(f"{path}: unterminated cpp block")
    return snippets


def snippet_function(index, snippet):
    """One snippet as a function in its own namespace; its #includes apart."""
    includes = [l.strip() for l in snippet.lines if l.strip().startswith("#include")]
    out = [f"namespace snippet_{index} {{",
           "absl::Status Run(HEARTH_DOC_PARAMS) {",
           "  {  // a nested block, so the snippet may declare names the prelude has",
           f'#line {snippet.line} "{snippet.path}"']
    for line in snippet.lines:
        out.append("" if line.strip().startswith("#include") else line)
    out += ["  }", "  return absl::OkStatus();", "}", f"}}  // namespace snippet_{index}", ""]
    return includes, out


def component_source(component, prelude, headers, snippets, relative):
    """The generated translation unit of one component."""
    compiled = [s for s in snippets if s.compiled]
    marked = [s for s in snippets if not s.compiled]
    includes = ["#include \"hearth/hearth.h\"", f"#include \"{prelude}\""]
    includes += [f"#include \"{h}\"" for h in headers]
    bodies = []
    for index, snippet in enumerate(compiled):
        extra, body = snippet_function(index, snippet)
        includes += [i for i in extra if i not in includes]
        bodies += body
    runs = [(i, s) for i, s in enumerate(compiled) if s.runs]
    listing = [f'    "  {"compiled, run" if s.runs else "compiled":13} {relative(s)}\\n"'
               for s in compiled]
    listing += [f'    "  not compiled  {relative(s)}\\n"' for s in marked]
    return "\n".join(
        ["// Generated by tests/doc_snippets/extract_snippets.py; do not edit.",
         "#include <cstdio>", "#include <string>", *includes, "", "namespace hearth_doc_snippets {", "",
         *bodies,
         "// What this component's executable reports when CTest runs it.",
         "int PrintSummary() {",
         f'  std::printf("%s", "doc snippets ({component}): {len(compiled)} compiled, '
         f'{len(marked)} marked not compiled\\n"',
         *listing, "  );", f"  return {len(compiled)};", "}", "",
         "// Runs the examples marked ```cpp run; how many failed.",
         "int RunSnippets() {",
         "  int failed = 0;",
         *[line for i, s in runs for line in (
             f"  if (absl::Status s = RunExample(snippet_{i}::Run); !s.ok()) {{",
             f'    std::printf("FAILED  {relative(s)}: %s\\n", std::string(s.message()).c_str());',
             "    ++failed;",
             "  }")],
         "  return failed;", "}", "",
         "}  // namespace hearth_doc_snippets", ""])


def write_if_changed(path, text):
    """Leaves an unchanged file alone, so that nothing recompiles."""
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source-dir", required=True, type=pathlib.Path)
    parser.add_argument("--out-dir", required=True, type=pathlib.Path)
    parser.add_argument(
        "--component", action="append", default=[], metavar="NAME:PRELUDE:HEADERS",
        help="a component, its prelude header and its headers (comma-separated "
             "absolute paths; those outside include/ are ignored)")
    return parser.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    include_dir = args.source_dir / "include"
    components = {}
    for spec in args.component:
        name, prelude, headers = spec.split(":", 2)
        paths = [pathlib.Path(h) for h in headers.split(",") if h]
        components[name] = (prelude, sorted(p.relative_to(include_dir).as_posix()
                                            for p in paths if include_dir in p.parents))
    owner = {h: name for name, (_, headers) in components.items() for h in headers}
    found = {name: [] for name in components}
    try:
        found["core"] += readme_snippets(args.source_dir / "README.md")
        # Only the core's prelude can run an example (RunExample).
        # (Header examples are never run: several read files or need a GPU.)
        for path in sorted(include_dir.glob("hearth/**/*.h")):
            header = path.relative_to(include_dir).as_posix()
            snippets = header_snippets(path)
            if snippets and header not in owner:
                raise ValueError(f"{path}: has examples but belongs to no component "
                                 f"built here")
            found.setdefault(owner.get(header), []).extend(snippets)
    except ValueError as error:
        print(f"extract_snippets: {error}", file=sys.stderr)
        return 1
    relative = lambda s: f"{s.path.relative_to(args.source_dir).as_posix()}:{s.line - 1}"
    args.out_dir.mkdir(parents=True, exist_ok=True)
    for name, (prelude, headers) in components.items():
        text = component_source(name, prelude, headers, found[name], relative)
        write_if_changed(args.out_dir / f"snippets_{name}.cc", text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
