#!/usr/bin/env python3
"""Parses the block-YAML subset our docs' manifests use, for machines without PyYAML.

Usage: yaml_subset.py FILE   (prints the documents as JSON; exit 1 with the line on a problem)

The subset: documents separated by `---`; mappings `key: value` / `key:` and sequences `- ...`
by indentation (spaces only); plain or double-quoted scalars; literal blocks `|`. Anything else
(flow collections, anchors, tags, multi-line plain scalars) is refused, so a manifest that passes
is one PyYAML would read the same way. Integers and true/false are typed as YAML 1.1 would.
"""
import json
import re
import sys

KEY = re.compile(r'^([A-Za-z_][A-Za-z0-9_.-]*):(?: (.*))?$')


class Bad(Exception):
    pass


def scalar(text, n):
    if text.startswith('"'):
        if not re.fullmatch(r'"(?:[^"\\]|\\.)*"', text):
            raise Bad(f"line {n}: unbalanced quotes")
        return json.loads(text)
    if text[:1] in "[{&*!|>'%@`" or re.search(r" #|: ", text):
        raise Bad(f"line {n}: outside the subset: {text}")
    if re.fullmatch(r"-?[0-9]+", text):
        return int(text)
    return {"true": True, "false": False, "null": None}.get(text, text)


def parse(lines):
    """lines: [(number, indent, text)] of one document."""
    pos = 0

    def block(indent):
        nonlocal pos
        n, ind, text = lines[pos]
        if ind != indent:
            raise Bad(f"line {n}: indentation {ind}, expected {indent}")
        if text.startswith("- ") or text == "-":
            out = []
            while pos < len(lines) and lines[pos][1] == indent and lines[pos][2].startswith("-"):
                n, _, text = lines[pos]
                rest = text[2:] if text != "-" else ""
                if not rest:
                    pos += 1
                    out.append(block(lines[pos][1]) if pos < len(lines) and lines[pos][1] > indent else None)
                elif KEY.match(rest):  # "- key: value" starts a mapping at indent + 2
                    lines[pos] = (n, indent + 2, rest)
                    out.append(block(indent + 2))
                else:
                    out.append(value(rest, n, indent))
            return out
        out = {}
        while pos < len(lines) and lines[pos][1] == indent and not lines[pos][2].startswith("- "):
            n, _, text = lines[pos]
            m = KEY.match(text)
            if not m:
                raise Bad(f"line {n}: expected key: value, got {text}")
            if m.group(1) in out:
                raise Bad(f"line {n}: duplicate key {m.group(1)}")
            if m.group(2) is None:
                pos += 1
                nested = pos < len(lines) and (lines[pos][1] > indent or
                                               (lines[pos][1] == indent and lines[pos][2].startswith("- ")))
                out[m.group(1)] = block(lines[pos][1]) if nested else None
            else:
                out[m.group(1)] = value(m.group(2), n, indent)
        if pos < len(lines) and lines[pos][1] > indent:
            raise Bad(f"line {lines[pos][0]}: unexpected indentation")
        return out

    def value(text, n, indent):
        nonlocal pos
        pos += 1
        if text != "|":
            return scalar(text, n)
        body = []
        while pos < len(lines) and (lines[pos][1] > indent or lines[pos][2] == ""):
            body.append(lines[pos])
            pos += 1
        if not body:
            raise Bad(f"line {n}: empty literal block")
        base = body[0][1]
        return "".join(" " * (ind - base) + t + "\n" for _, ind, t in body)

    doc = block(lines[0][1]) if lines else None
    if pos != len(lines):
        raise Bad(f"line {lines[pos][0]}: unexpected indentation")
    return doc


def load_all(text):
    docs, current = [], []
    for n, raw in enumerate(text.split("\n"), 1):
        if "\t" in raw[: len(raw) - len(raw.lstrip())]:
            raise Bad(f"line {n}: tab in indentation")
        stripped = raw.strip()
        if stripped == "---":
            docs.append(current)
            current = []
        elif stripped and not stripped.startswith("#"):
            current.append((n, len(raw) - len(raw.lstrip(" ")), raw.rstrip().lstrip(" ")))
    docs.append(current)
    return [parse(d) for d in docs if d]


if __name__ == "__main__":
    try:
        print(json.dumps(load_all(open(sys.argv[1]).read()), indent=1))
    except Bad as e:
        print(f"{sys.argv[1]}: {e}", file=sys.stderr)
        sys.exit(1)
