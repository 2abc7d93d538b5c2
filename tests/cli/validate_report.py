#!/usr/bin/env python3
"""Validates tracegate reports against the schema `tracegate schema` prints (the template
reports/schema/tracegate.report.v1.schema.in.json with the headline keys of report_keys.h put in).

Usage: validate_report.py REPORT.json...   (exit 0: all valid; 1: a report is not; 2: setup)
The binary is $TRACEGATE_BINARY (CTest sets it), else build/tracegate. Other CLI tests may call it
on the reports they write. Needs python3-jsonschema (ci/deps.sh).
"""
import json
import os
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def load_schema():
    binary = os.environ.get("TRACEGATE_BINARY") or os.path.join(ROOT, "build", "tracegate")
    return json.loads(subprocess.run([binary, "schema"], capture_output=True, text=True, check=True).stdout)


def main(paths):
    try:
        import jsonschema
    except ImportError:
        print("validate_report.py: python3 has no jsonschema module; install python3-jsonschema "
              "(ci/deps.sh does)", file=sys.stderr)
        return 2
    try:
        schema = load_schema()
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"validate_report.py: cannot get the schema from tracegate schema: {e}", file=sys.stderr)
        return 2
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    bad = 0
    for path in paths:
        with open(path, encoding="utf-8") as f:
            report = json.load(f)
        errors = sorted(validator.iter_errors(report), key=lambda e: list(e.absolute_path))
        for e in errors[:5]:
            where = "/".join(str(p) for p in e.absolute_path) or "(top level)"
            print(f"{path}: {where}: {e.message[:200]}", file=sys.stderr)
        bad += bool(errors)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
