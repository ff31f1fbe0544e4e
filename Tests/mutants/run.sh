#!/usr/bin/env bash
# Issue #24 condition 6: every refusal rule of the codec is needed — removing any one of them fails a named test.
#
# schemata.py copies Sources/BearerCodec with each refusal rule behind a switch (BEARER_MUTANT=N turns rule N off)
# and the codec's named tests beside it into a small package of its own; it is built once, in its own folder, and
# verdicts.py runs its tests with no mutant (all must pass) and then once per mutant (each must fail). Survivors are
# printed with their site and fail the run. The product's sources are only read. See Tests/mutants/README.md.
#
#     Tests/mutants/run.sh                  every mutant
#     Tests/mutants/run.sh 12,40            only these (numbers from .build-mutants/package/mutants.tsv)
#
# MUTANTS_JOBS (default 2) runs that many at a time.
set -euo pipefail
REPO_ROOT=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$REPO_ROOT"
start=$(date +%s.%N)
dir=.build-mutants/package

python3 Tests/mutants/schemata.py --repo . --out "$dir"
# Its own scratch folder beside the package, kept between runs: after the first, a build recompiles only the codec
# copy and the tests (NIOCore, its one dependency, stays built).
build=(swift build --package-path "$dir" --scratch-path .build-mutants/scratch --build-tests)
"${build[@]}" >&2
binary="$("${build[@]}" --show-bin-path)/bearer-codec-mutantsPackageTests.xctest"
built=$(date +%s.%N)

status=0
python3 Tests/mutants/verdicts.py --dir "$dir" --binary "$binary" --jobs "${MUTANTS_JOBS:-2}" \
    ${1:+--only "$1"} || status=$?
awk -v start="$start" -v built="$built" -v end="$(date +%s.%N)" \
    'BEGIN { printf "  (mutation check: %.0f s, of which the build %.0f s)\n", end - start, built - start }'
exit "$status"
