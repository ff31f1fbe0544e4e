#!/usr/bin/env python3
"""Checks docs/routes.schema.json with jsonschema, an independent JSON Schema implementation (draft 2020-12).

usage: validate_schema.py SCHEMA < CASES
CASES is a JSON array of {"name": string, "config": any JSON value, "valid": bool}: each config must be accepted
by the schema when "valid" is true and rejected when it is false. Prints one line per case and exits 1 if any
case disagrees, 2 if jsonschema is missing, 3 if the schema itself is not a valid draft 2020-12 schema.

Formats ("format": "uri") are annotations here, as draft 2020-12 makes them by default: every rule the tests rely
on is written as a pattern, so the result does not depend on which optional format checkers are installed.
"""
import json
import sys

try:
    import jsonschema
    from jsonschema import Draft202012Validator
except ImportError:
    print("validate_schema.py needs the jsonschema package: python3 -m pip install 'jsonschema>=4.18'", file=sys.stderr)
    sys.exit(2)


def describe(error: "jsonschema.ValidationError") -> str:
    """`routes[0].prefix: <message>`, the way bearer-proxy names paths."""
    path = ""
    for part in error.absolute_path:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return f"{path or '$'}: {error.message}"


def main() -> int:
    with open(sys.argv[1], encoding="utf-8") as file:
        schema = json.load(file)
    try:
        Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as error:
        print(f"{sys.argv[1]} is not a valid draft 2020-12 schema: {error.message}", file=sys.stderr)
        return 3
    validator = Draft202012Validator(schema)

    cases = json.load(sys.stdin)
    mismatches = 0
    for case in cases:
        error = jsonschema.exceptions.best_match(validator.iter_errors(case["config"]))
        if case["valid"] and error is None:
            print(f"ok    valid     {case['name']}")
        elif not case["valid"] and error is not None:
            print(f"ok    rejected  {case['name']}  ({describe(error)})")
        elif case["valid"]:
            mismatches += 1
            print(f"FAIL  expected valid, schema rejects  {case['name']}  ({describe(error)})")
        else:
            mismatches += 1
            print(f"FAIL  expected invalid, schema accepts  {case['name']}")
    print(f"{len(cases)} cases, {mismatches} disagreeing with the schema")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
