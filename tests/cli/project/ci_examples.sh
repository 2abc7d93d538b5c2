#!/usr/bin/env bash
# The CI examples in ci/examples/ stay true: each parses as YAML, and every `tracegate SUB
# --option` it runs names a subcommand and options that `tracegate SUB --help` lists.
source "$(dirname "$0")/../testlib.bash"
examples=$(cd "$fixtures/../../ci/examples" && pwd)
python3 - "$tg" "$examples"/*.yml <<'EOF_PY' && ok || fail "ci/examples"
import re, subprocess, sys, yaml
tg, files = sys.argv[1], sys.argv[2:]
assert len(files) >= 2, files
problems, checked = [], 0
def scripts(node):
    if isinstance(node, dict):
        for k, v in node.items():
            if k in ("run", "script", "after_script", "before_script"):
                yield from (v if isinstance(v, list) else [v])
            else:
                yield from scripts(v)
    elif isinstance(node, list):
        for v in node:
            yield from scripts(v)
for f in files:
    doc = yaml.safe_load(open(f))
    for text in scripts(doc):
        text = re.sub(r"\\\n", " ", str(text))
        for m in re.finditer(r"build/tracegate\s+(\w+)(?:\s+(\w+))?([^\n|;&]*)", text):
            sub = [m.group(1)]
            rest = m.group(3)
            help_args = [tg, m.group(1), "--help"]
            out = subprocess.run(help_args, capture_output=True, text=True)
            if out.returncode != 0 or f"Usage: tracegate {m.group(1)} " not in out.stdout:
                problems.append(f"{f}: `tracegate {m.group(1)}` is not a subcommand"); continue
            if m.group(2) and re.search(r"^\s*" + m.group(2) + r"\s", out.stdout, re.M):
                out = subprocess.run([tg, m.group(1), m.group(2), "--help"], capture_output=True, text=True)
                sub.append(m.group(2))
                if f"Usage: tracegate {' '.join(sub)} " not in out.stdout:
                    problems.append(f"{f}: `tracegate {' '.join(sub)}` is not a subcommand"); continue
            elif m.group(2):
                rest = " " + m.group(2) + rest
            rest = rest.split(" -- ")[0]  # after --, the recorded command's own arguments
            for opt in re.findall(r"(?<!\S)(--[a-z][a-z0-9-]*)", rest):
                checked += 1
                if not re.search(re.escape(opt) + r"\b", out.stdout):
                    problems.append(f"{f}: `tracegate {' '.join(sub)}` has no option {opt}")
print(f"ci_examples: {checked} options checked")
assert checked >= 20, checked
assert not problems, "\n".join(problems)
EOF_PY
finish ci_examples.sh
