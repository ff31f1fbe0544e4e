#!/usr/bin/env bash
# The long differential run of issue #24 condition 2: INPUTS seeded mutations of the corpus per seed through the
# three references (NIOHTTP1, h11, net/http), and PROXY_INPUTS per seed through the real proxy (requests, and
# responses relayed back); prints inputs/s and the agree / refuse / disagree tallies by family. The same
# swift-testing suites as CI, scaled up through the environment
# (Tests/BearerProxyTests/Differential/DifferentialSettings.swift), so the long run and CI cannot drift.
#
#     Tests/differential/long-run.sh [INPUTS [SEEDS [PROXY_INPUTS]]]    e.g. long-run.sh 2000000 1,2,3,4,5 2000
#
# Needs go (golang-go) on PATH and h11 importable by python3 (.ci/run installs both); builds the tests first.
set -euo pipefail
cd "$(dirname "$0")/../.."

inputs=${1:-1000000}
seeds=${2:-1,2,3,4,5}
proxy_inputs=${3:-1000}
# The same flags as .ci/run, so that after a CI run this build is incremental.
swift build --build-tests -Xswiftc -warnings-as-errors --explicit-target-dependency-import-check error
DIFFERENTIAL_INPUTS=$inputs DIFFERENTIAL_SEEDS=$seeds DIFFERENTIAL_PROXY_INPUTS=$proxy_inputs CI=true \
    swift test --skip-build --filter 'SeededDifferentialTests|ProxyDifferentialTests/seeded|ResponseRelayTests'
