#!/usr/bin/python3
"""Check README.md and docs/*.md against the repository:

  readme-check.py ROOT

1. Every command of the README's ```sh blocks in its quick-start
   sections (a "##" heading naming the two commands, a quick start, or
   using the toolchain) exists.  The first word of each command (after
   VAR=value assignments) must be
     - make, whose targets must be targets of the top-level Makefile
       ("target:" lines and .PHONY);
     - a path in the repository (build-scripts/..., bench/..., .ci/run)
       that exists and is executable;
     - out/bin/NAME, where NAME is a driver the Makefile installs
       (build-scripts/bin/NAME) or TRIPLE-TOOL as
       build-scripts/build/install-cross-drivers.sh links it for a
       cross ABI of build-scripts/tables/abis;
     - a program an earlier command of the same block wrote (-o FILE).
2. Every repository path that README.md or a docs page names (in
   backticks, in a code block or as a link) exists.  A path is a word
   whose first component is a top-level entry of the repository (out/
   is not); {a,b} is expanded, and an upper-case placeholder component
   (ARCH, NAME, ...) matches any name.
3. Every relative link of README.md and docs/*.md resolves, including
   its #fragment (a heading of the target, GitHub's anchor rules).
4. README.md is under 200 lines.

Prints one line per problem and exits 1 if there is any; else prints a
summary and exits 0.  Standard library only (Debian's /usr/bin/python3).
"""

import glob
import os
import re
import shlex
import subprocess
import sys

MAX_README_LINES = 200
COMMAND_SECTION = re.compile(r"two commands|quick[ -]?start|using", re.I)
SHELL_LANGS = {"sh", "bash", "shell", "console"}
# Upper-case words that stand in a path for any name (vm-ARCH.config).
PLACEHOLDER = re.compile(r"(?<![A-Za-z])[A-Z][A-Z0-9_]*(?![a-z])")
PLACEHOLDER_WORDS = {"ABI", "ARCH", "AREA", "DIR", "NAME", "TRIPLE", "VM",
                     "TOOL", "PREFIX", "FILE"}


class Doc:
    """A Markdown file: its lines, fenced blocks and headings."""

    def __init__(self, path, rel):
        self.path = path
        self.rel = rel
        with open(path, encoding="utf-8") as f:
            self.lines = f.read().split("\n")
        if self.lines and self.lines[-1] == "":
            self.lines.pop()
        # blocks: (lang, first line number, [lines], level-2 section title)
        self.blocks = []
        # prose: (line number, text) outside fenced blocks
        self.prose = []
        self.headings = []
        section = ""
        fence = None
        for number, line in enumerate(self.lines, 1):
            stripped = line.strip()
            if fence is None:
                m = re.match(r"^\s{0,3}(`{3,}|~{3,})\s*([\w+-]*)", line)
                if m:
                    fence = m.group(1)
                    block = (m.group(2).lower(), number + 1, [], section)
                    continue
                m = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
                if m:
                    self.headings.append(m.group(2))
                    if len(m.group(1)) <= 2:
                        section = m.group(2)
                self.prose.append((number, line))
            elif stripped.startswith(fence[0] * len(fence)) and \
                    stripped.strip(fence[0]) == "":
                self.blocks.append(block)
                fence = None
            else:
                block[2].append(line)
        if fence is not None:
            self.blocks.append(block)

    def anchors(self):
        """GitHub's heading anchors: lower case, punctuation dropped,
        spaces to hyphens, -1, -2... for repeats."""
        seen = {}
        result = set()
        for title in self.headings:
            text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", title)
            text = text.lower()
            text = re.sub(r"[^\w\- ]", "", text)
            slug = text.replace(" ", "-")
            if slug in seen:
                seen[slug] += 1
                result.add(f"{slug}-{seen[slug]}")
            else:
                seen[slug] = 0
                result.add(slug)
        return result


class Checker:
    def __init__(self, root):
        self.root = os.path.abspath(root)
        self.problems = []
        self.counts = {"commands": 0, "paths": 0, "links": 0}
        # (file, line, path) a command check already reported.
        self.reported = set()
        self.docs_cache = {}
        self.top_entries = {name for name in os.listdir(self.root)
                            if name not in (".git", "out")}

    def problem(self, doc, number, text):
        self.problems.append(f"{doc.rel}:{number}: {text}")

    def doc(self, path):
        path = os.path.normpath(path)
        if path not in self.docs_cache:
            rel = os.path.relpath(path, self.root)
            self.docs_cache[path] = Doc(path, rel)
        return self.docs_cache[path]

    # -- the Makefile, the drivers, the cross ABIs -----------------------

    def make_targets(self):
        targets = set()
        with open(os.path.join(self.root, "Makefile")) as f:
            text = f.read()
        for line in text.split("\n"):
            m = re.match(r"^([A-Za-z0-9_.%/ -]+?)\s*::?(?!=)", line)
            if m and not line.startswith("\t"):
                for name in m.group(1).split():
                    if name != ".PHONY":
                        targets.add(name)
            m = re.match(r"^\.PHONY\s*:(.*)", line)
            if m:
                targets.update(m.group(1).split())
        return targets

    def rseq_abi(self, *args):
        """The answer of the ABI table's reader, build-scripts/bin/rseq-abi,
        as a list of lines."""
        reader = os.path.join(self.root, "build-scripts", "bin", "rseq-abi")
        out = subprocess.run([reader, *args], capture_output=True, text=True,
                             check=True).stdout
        return out.split()

    def cross_driver_names(self):
        names = set()
        abis = os.path.join(self.root, "build-scripts", "tables", "abis")
        script = os.path.join(self.root, "build-scripts", "build",
                              "install-cross-drivers.sh")
        if not (os.path.isfile(abis) and os.path.isfile(script)):
            return names
        with open(script) as f:
            text = f.read()
        tools = []
        m = re.search(r"link_abi\(\)\s*\{(.*?)\n\}", text, re.S)
        if m:
            loop = re.search(r"for tool in ([^;]*);", m.group(1))
            if loop and "$triple-$tool" in m.group(1):
                tools = loop.group(1).split()
        for abi in self.rseq_abi("names", "cross"):
            triple = self.rseq_abi("field", abi, "triple")[0]
            for tool in tools:
                names.add(f"{triple}-{tool}")
        return names

    # -- 1: commands ----------------------------------------------------

    @staticmethod
    def logical_lines(block_lines, first):
        """Join backslash continuations; yield (line number, text)."""
        pending, start = "", None
        for offset, line in enumerate(block_lines):
            if start is None:
                start = first + offset
            if line.rstrip().endswith("\\"):
                pending += line.rstrip()[:-1] + " "
                continue
            yield start, pending + line
            pending, start = "", None
        if pending:
            yield start, pending

    @staticmethod
    def split_commands(text):
        lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|<>")
        lexer.whitespace_split = True
        lexer.commenters = "#"
        words = list(lexer)
        commands, current, skip_next = [], [], False
        for word in words:
            if skip_next:
                skip_next = False
                continue
            if word and set(word) <= set(";&|"):
                if current:
                    commands.append(current)
                current = []
            elif word and set(word) <= set("<>&"):
                skip_next = True
            else:
                current.append(word)
        if current:
            commands.append(current)
        return commands

    def check_commands(self, readme):
        targets = self.make_targets()
        cross_names = self.cross_driver_names()
        drivers = os.path.join(self.root, "build-scripts", "bin")
        sections = set()
        for lang, first, lines, section in readme.blocks:
            if lang not in SHELL_LANGS or not COMMAND_SECTION.search(section):
                continue
            sections.add(section)
            built = set()
            for number, text in self.logical_lines(lines, first):
                try:
                    commands = self.split_commands(text)
                except ValueError as e:
                    self.problem(readme, number, f"cannot parse '{text.strip()}': {e}")
                    continue
                for words in commands:
                    while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
                        words = words[1:]
                    if words and words[0] == "env":
                        words = words[1:]
                        while words and "=" in words[0]:
                            words = words[1:]
                    if not words:
                        continue
                    self.counts["commands"] += 1
                    self.check_command(readme, number, words, built, targets,
                                       cross_names, drivers)
                    for i, word in enumerate(words):
                        if word == "-o" and i + 1 < len(words):
                            built.add(os.path.normpath(words[i + 1]))
                        elif word.startswith("-o") and len(word) > 2:
                            built.add(os.path.normpath(word[2:]))
        if not sections:
            self.problem(readme, 1, "no ```sh block under a quick-start, "
                         "\"two commands\" or \"using\" section")

    def check_command(self, readme, number, words, built, targets,
                      cross_names, drivers):
        program = words[0]
        shown = " ".join(words)
        if program == "make":
            for word in words[1:]:
                if word.startswith("-") or "=" in word:
                    continue
                if word not in targets:
                    self.problem(readme, number,
                                 f"'{shown}': '{word}' is not a target of the Makefile")
            return
        if os.path.normpath(program) in built:
            return
        if program.startswith("out/bin/"):
            name = program[len("out/bin/"):]
            driver = os.path.join(drivers, name)
            if "/" not in name and os.path.isfile(driver) and os.access(driver, os.X_OK):
                return
            if name in cross_names:
                return
            self.problem(readme, number,
                         f"'{shown}': {program} is neither a driver the Makefile "
                         f"installs (build-scripts/bin/{name}) nor a cross driver "
                         f"of build-scripts/build/install-cross-drivers.sh")
            return
        if program.startswith("out/"):
            self.problem(readme, number,
                         f"'{shown}': {program} is not built by an earlier line "
                         f"of this block")
            return
        if "/" in program and not program.startswith("/"):
            path = os.path.join(self.root, program)
            self.reported.add((readme.rel, number, os.path.normpath(program)))
            if not os.path.exists(path):
                self.problem(readme, number,
                             f"'{shown}': {program} does not exist in the repository")
            elif not (os.path.isfile(path) and os.access(path, os.X_OK)):
                self.problem(readme, number,
                             f"'{shown}': {program} is not an executable file")
            return
        self.problem(readme, number,
                     f"'{shown}': '{program}' is not make, a repository program, "
                     f"an out/bin driver or a program built earlier in the block")

    # -- 2: repository paths ---------------------------------------------

    @staticmethod
    def expand_braces(word):
        m = re.search(r"\{([^{}]*)\}", word)
        if not m:
            return [word]
        result = []
        for choice in m.group(1).split(","):
            result += Checker.expand_braces(word[:m.start()] + choice + word[m.end():])
        return result

    def path_exists(self, rel):
        if os.path.exists(os.path.join(self.root, rel)):
            return True
        # An upper-case placeholder (vm-ARCH.config, rseq.AREA) stands for
        # any name: the path exists if some name fits.
        replaced = []

        def wildcard(m):
            if m.group(0) in PLACEHOLDER_WORDS:
                replaced.append(m.group(0))
                return "*"
            return m.group(0)

        pattern = PLACEHOLDER.sub(wildcard, glob.escape(rel))
        return bool(replaced) and bool(
            glob.glob(os.path.join(glob.escape(self.root), pattern)))

    def candidate_paths(self, text):
        for word in re.findall(r"[\w.{},+@-]+(?:/[\w.{},+@-]*)+", text):
            word = word.rstrip(".,:;")
            first = word.split("/", 1)[0]
            if first not in self.top_entries or "..." in word:
                continue
            for path in self.expand_braces(word):
                yield path.rstrip("/") if path != "/" else path

    def check_paths(self, doc):
        seen = set()

        def check(number, text):
            for path in self.candidate_paths(text):
                if (number, path) in seen or \
                        (doc.rel, number, os.path.normpath(path)) in self.reported:
                    continue
                seen.add((number, path))
                self.counts["paths"] += 1
                if not self.path_exists(path):
                    self.problem(doc, number,
                                 f"'{path}' does not exist in the repository")

        for number, line in doc.prose:
            for span in re.findall(r"`+([^`]+)`+", line):
                check(number, span)
        for _lang, first, lines, _section in doc.blocks:
            for offset, line in enumerate(lines):
                check(first + offset, line)

    # -- 3: links ----------------------------------------------------------

    def check_links(self, doc):
        for number, line in doc.prose:
            # Code spans are not links.
            line = re.sub(r"`+[^`]*`+", "", line)
            for target in re.findall(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)",
                                     line):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):
                    continue        # http:, https:, mailto:
                self.counts["links"] += 1
                path, _, fragment = target.partition("#")
                if path:
                    full = os.path.normpath(os.path.join(os.path.dirname(doc.path), path))
                    if not (full == self.root or full.startswith(self.root + os.sep)):
                        self.problem(doc, number, f"link '{target}' leaves the repository")
                        continue
                    if not os.path.exists(full):
                        self.problem(doc, number, f"link '{target}': {os.path.relpath(full, self.root)} does not exist")
                        continue
                else:
                    full = doc.path
                if fragment:
                    if not full.endswith(".md") or not os.path.isfile(full):
                        self.problem(doc, number, f"link '{target}': a #fragment on a file that is not Markdown")
                    elif fragment not in self.doc(full).anchors():
                        self.problem(doc, number,
                                     f"link '{target}': no heading '#{fragment}' in "
                                     f"{os.path.relpath(full, self.root)}")

    # -- all -----------------------------------------------------------

    def run(self):
        readme_path = os.path.join(self.root, "README.md")
        if not os.path.isfile(readme_path):
            self.problems.append("README.md: missing")
            return
        readme = self.doc(readme_path)
        if len(readme.lines) >= MAX_README_LINES:
            self.problem(readme, len(readme.lines),
                         f"README.md has {len(readme.lines)} lines "
                         f"(must be under {MAX_README_LINES})")
        self.check_commands(readme)
        docs = [readme] + [self.doc(p) for p in
                           sorted(glob.glob(os.path.join(self.root, "docs", "*.md")))]
        for doc in docs:
            self.check_paths(doc)
            self.check_links(doc)
        self.files = [d.rel for d in docs]
        self.readme_lines = len(readme.lines)


def main(argv):
    if len(argv) != 2 or not os.path.isdir(argv[1]):
        print("usage: readme-check.py ROOT (the top of the repository)", file=sys.stderr)
        return 2
    checker = Checker(argv[1])
    checker.run()
    for line in checker.problems:
        print(line)
    if checker.problems:
        print(f"readme-check: {len(checker.problems)} problem(s)", file=sys.stderr)
        return 1
    c = checker.counts
    print(f"readme-check: README.md {checker.readme_lines} lines; "
          f"{c['commands']} commands, {c['paths']} repository paths and "
          f"{c['links']} links checked in {len(checker.files)} files "
          f"({', '.join(checker.files)}): no problems")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
