#!/usr/bin/env bash
# Static checks for the container packaging in docker/: YAML schemas and safety rules, the Dockerfile rules
# (plus hadolint when it is on PATH; the build stage must copy every target directory of Package.swift),
# routes.json keys against docs/configuration.md. No Docker engine needed; docker/check-image.sh builds and runs
# the image for real.
# Needs python3 with PyYAML and jsonschema (python3 -m pip install pyyaml jsonschema).
# Prints one line per file and closes with "N passed, M failed"; exits non-zero on any problem.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

if ! python3 -c 'import yaml, jsonschema' 2>/dev/null; then
    echo "Tests/docker/lint.sh: needs PyYAML and jsonschema: python3 -m pip install pyyaml jsonschema" >&2
    exit 2
fi
exec python3 Tests/docker/lint.py "$@"
