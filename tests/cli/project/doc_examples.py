"""The examples in the docs are real: every ```console block of the given Markdown pages runs, and
what it shows is what the command prints.

Usage: doc_examples.py TRACEGATE REPO_ROOT SHARED_TRACES PAGE.md... [--print]

A block is a series of `$ COMMAND` lines (a line ending in a backslash continues on the next),
each followed by the output it shows. The output is matched against what the command prints
(stdout and stderr together): lines stand for themselves, a line that is only `...` (indented or
not) stands for any number of lines, and each run of lines between `...` must appear, in order
and contiguously, in the real output. A block that shows no output checks only that the command
succeeds (exit 0), unless the next command is `echo $?`, whose shown output is the exit code.

The commands of one page run in order, in one scratch directory laid out as the checkout:
`build/tracegate` (the binary under test) and `build/tracegate-gen-kineto` (beside it), `tests/` and `ci/` (links to the repository's), a copy
of `baselines/`, and `../shared/traces`. When they are absent, a block that names
../shared/traces is skipped with a printed reason, and so is every later block of its page (they
may read what it wrote). --print shows each command's real output instead of
checking it (to write a page).
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile


def blocks(path):
    """Yields (line number, [(command, shown output lines)]) for each ```console block."""
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        if lines[i].strip() != "```console":
            i += 1
            continue
        start = i + 1
        i += 1
        steps = []
        while i < len(lines) and not lines[i].startswith("```"):
            line = lines[i]
            if line.startswith("$ "):
                cmd = line[2:]
                while cmd.endswith("\\") and i + 1 < len(lines):
                    i += 1
                    cmd = cmd + "\n" + lines[i]
                steps.append([cmd, []])
            elif steps:
                steps[-1][1].append(line)
            else:
                raise SystemExit(f"{path}:{i + 1}: a console block must start with a `$ ` command")
            i += 1
        yield start, steps
        i += 1


def matches(shown, real):
    """Each run of shown lines between `...` lines appears contiguously in real, in order."""
    chunks, cur = [], []
    for line in shown:
        if line.strip() == "...":
            chunks.append(cur)
            cur = []
        else:
            cur.append(line.rstrip())
    chunks.append(cur)
    real = [l.rstrip() for l in real]
    pos = 0
    for n, chunk in enumerate(chunks):
        if not chunk:
            continue
        found = -1
        # The first run starts the output unless the block opened with `...`; the last run ends it
        # unless it closes with `...`.
        last = n == len(chunks) - 1
        candidates = [0] if n == 0 else range(pos, len(real) - len(chunk) + 1)
        for at in candidates:
            if real[at:at + len(chunk)] == chunk and (not last or at + len(chunk) == len(real)):
                found = at
                break
        if found < 0:
            return f"not found in order: {chunk[0]!r}" + (f" ... ({len(chunk)} lines)" if len(chunk) > 1 else "")
        pos = found + len(chunk)
    return None


def setup(root, shared, work):
    checkout = os.path.join(work, "checkout")
    os.makedirs(os.path.join(checkout, "build"))
    for name in ("tests", "ci"):
        os.symlink(os.path.join(root, name), os.path.join(checkout, name))
    shutil.copytree(os.path.join(root, "baselines"), os.path.join(checkout, "baselines"),
                    ignore=shutil.ignore_patterns("history.db"))
    if os.path.isdir(shared):
        os.makedirs(os.path.join(work, "shared"))
        os.symlink(shared, os.path.join(work, "shared", "traces"))
    return checkout


def main():
    args = [a for a in sys.argv[1:] if a != "--print"]
    show = "--print" in sys.argv
    tg, root, shared, pages = os.path.abspath(args[0]), os.path.abspath(args[1]), args[2], args[3:]
    problems, ran, skipped = [], 0, 0
    for page in pages:
        rel = os.path.relpath(page, root)
        with tempfile.TemporaryDirectory() as work:
            checkout = setup(root, shared, work)
            os.symlink(tg, os.path.join(checkout, "build", "tracegate"))
            gen = os.path.join(os.path.dirname(tg), "tracegate-gen-kineto")  # docs/SERVING.md's runs
            if os.path.exists(gen):
                os.symlink(gen, os.path.join(checkout, "build", "tracegate-gen-kineto"))
            last_rc = 0
            nblocks = 0
            no_shared_since = None  # the line of the first block skipped for want of ../shared/traces
            for line, steps in blocks(page):
                nblocks += 1
                text = "\n".join(c for c, _ in steps)
                if "../shared/traces" in text and not os.path.isdir(shared) and no_shared_since is None:
                    no_shared_since = line
                if no_shared_since is not None:
                    why = ("the block reads ../shared/traces" if line == no_shared_since else
                           f"it follows the block at line {no_shared_since}, skipped")
                    print(f"{rel}:{line}: skipped: {why} (../shared/traces is absent here: {shared})")
                    skipped += 1
                    continue
                for k, (cmd, shown) in enumerate(steps):
                    if cmd.strip() == "echo $?":
                        real_text, rc = f"{last_rc}\n", 0
                    else:
                        p = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], cwd=checkout,
                                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                        real_text, rc = p.stdout, p.returncode
                        ran += 1
                    last_rc = rc
                    real = real_text.split("\n")
                    if real and real[-1] == "":
                        real.pop()
                    while shown and shown[-1] == "":
                        shown = shown[:-1]
                    if show:
                        print(f"$ {cmd}   [exit {rc}]")
                        print(real_text, end="")
                        continue
                    nxt = steps[k + 1][0].strip() if k + 1 < len(steps) else ""
                    if rc != 0 and nxt != "echo $?":
                        problems.append(f"{rel}:{line}: `{cmd.splitlines()[0]}` exits {rc}, and no `echo $?` shows it:\n"
                                        + real_text[-2000:])
                        continue
                    if shown:
                        why = matches(shown, real)
                        if why:
                            problems.append(f"{rel}:{line}: `{cmd.splitlines()[0]}`: the shown output is not what it prints ({why});"
                                            f" it printed:\n{real_text[:40000]}")
            if nblocks == 0:
                problems.append(f"{rel}: no ```console block")
    for p in problems:
        print("FAIL: " + p)
    print(f"doc_examples: {ran} commands run on {len(pages)} pages, {skipped} blocks skipped, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
