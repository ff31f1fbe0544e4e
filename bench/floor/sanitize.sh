#!/usr/bin/env bash
# The codec under AddressSanitizer (#24 condition 1): a release build of bearer-codec-fuzz (bench/floor/Fuzz), which
# feeds seeded mutations of the codec's corpus through every BearerCodec entry point as a connection would — bytes in
# a ByteBuffer, arriving in pieces — and stops at the first finding (ASan's report, or a trap: an out-of-bounds Span
# index or an overflow, which Swift checks in release builds too). Zero findings is the bar.
#
#   bash bench/floor/sanitize.sh                          3 seeds x 300,000 inputs (CI runs SANITIZE_INPUTS=30000)
#   SANITIZE_SEEDS="7 8" SANITIZE_INPUTS=5000000 bash bench/floor/sanitize.sh
#
# Its own build folder (.build-sanitize): a sanitized build cannot share objects with the normal one.
set -euo pipefail
REPO_ROOT=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$REPO_ROOT"
INPUTS=${SANITIZE_INPUTS:-300000}
SEEDS=${SANITIZE_SEEDS:-"1 2 3"}
build=(swift build -c release --sanitize=address --scratch-path .build-sanitize --product bearer-codec-fuzz)
"${build[@]}" -Xswiftc -warnings-as-errors >&2
BIN="$("${build[@]}" --show-bin-path)/bearer-codec-fuzz"
# halt_on_error: the first finding ends the run with a non-zero status; leaks are not the codec's (it allocates
# only ByteBuffers it frees) and NIO's allocator caches would drown them.
export ASAN_OPTIONS=halt_on_error=1:detect_leaks=0:abort_on_error=0
# A trap is reported by the runtime's own message and the exit status; Swift's backtracer, asked to symbolicate an
# instrumented binary, can hang the run instead.
export SWIFT_BACKTRACE=enable=no
for seed in $SEEDS; do
    start=$(date +%s.%N)
    "$BIN" --seed "$seed" --inputs "$INPUTS"
    awk -v start="$start" -v end="$(date +%s.%N)" -v n="$INPUTS" \
        'BEGIN { printf "  (%d inputs in %.1f s, AddressSanitizer, release)\n", n, end - start }'
done
