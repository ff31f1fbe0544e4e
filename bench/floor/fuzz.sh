#!/usr/bin/env bash
# The codec's differential fuzz (Tests/BearerCodecTests/DifferentialFuzzTests.swift) run long: every input is
# either parsed to the same message by BearerCodec and NIOHTTP1's decoder, or refused by ours — a mismatch fails.
#
#   bash bench/floor/fuzz.sh                 1,000,000 requests and 666,666 responses per seed, seeds 1 and 2
#   FUZZ_INPUTS=200000 FUZZ_SEEDS="7 8 9" bash bench/floor/fuzz.sh
#
# Uses the debug test build (the one `swift test` makes): about 150,000 inputs a second on 2 cores.
set -euo pipefail
REPO_ROOT=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$REPO_ROOT"
INPUTS=${FUZZ_INPUTS:-1000000}
SEEDS=${FUZZ_SEEDS:-"1 2"}
swift build --build-tests >&2
for seed in $SEEDS; do
    BENCH_FUZZ_SEED=$seed BENCH_FUZZ_INPUTS=$INPUTS SWIFT_BACKTRACE=enable=no \
        swift test --skip-build --filter DifferentialFuzzTests 2>&1 |
        grep -E '^(requests|responses) \(seed|✘|passed after|failed after' | cut -c1-4000
done
