#!/usr/bin/env python3
"""Where two builds differ in a counted call: the callers of, say, swift_retain per request in each, and the rows
that changed, largest first.

    COUNTS_BINARY=old/bearer-proxy COUNTS_REQUESTS=100 COUNTS_CALLERS=swift_retain COUNTS_SAMPLES=old.txt \\
        bash bench/counts.sh          # prints old's exact swift_retain per request, say 490.4
    (the same for the new build into new.txt, say 497.0)
    python3 bench/callers-diff.py old.txt new.txt --totals 490.4 497.0 --depth 1

perf drops samples when the machine is busy, so each profile is scaled to its build's exact count (--totals):
the comparison is of shares, which losses spread evenly do not change. Frames are demangled before they are
compared, so a function that moved to another module (a SwiftPM target) is still one row.
"""
import argparse
import collections
import subprocess

import perf_samples

RUNTIME = ("swift_", "_swift", "malloc", "operator new", "[unknown]")


def samples(path):
    with open(path, encoding="utf-8", errors="replace") as lines:
        for stack in perf_samples.stacks(lines):
            yield [
                "[unknown]" if symbol == "?" else symbol.rsplit("+0x", 1)[0].replace(" (inlined)", "")
                for _, symbol in stack
            ]


def profile(path, depth, total):
    stacks = list(samples(path))
    frames = sorted({frame for stack in stacks for frame in stack})
    out = subprocess.run(["swift-demangle", "--simplified", "--compact"], input="\n".join(frames),
                         capture_output=True, text=True, check=True).stdout.splitlines()
    demangled = {frame: name.split("(")[0] for frame, name in zip(frames, out)}
    counts = collections.Counter()
    for stack in stacks:
        ours = [demangled[f] for f in stack[1:] if not f.startswith(RUNTIME)]
        counts[" <- ".join(ours[:depth]) or "(runtime only)"] += 1
    sampled = sum(counts.values()) or 1
    return {caller: count * total / sampled for caller, count in counts.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--totals", nargs=2, type=float, required=True, metavar=("OLD", "NEW"))
    parser.add_argument("--depth", type=int, default=1)
    parser.add_argument("--min", type=float, default=0.4, help="smallest change shown, per request")
    args = parser.parse_args()
    old = profile(args.old, args.depth, args.totals[0])
    new = profile(args.new, args.depth, args.totals[1])
    rows = sorted(((new.get(k, 0) - old.get(k, 0), k) for k in set(old) | set(new)), key=lambda row: -abs(row[0]))
    print("| change | old | new | caller |")
    print("|---|---|---|---|")
    for change, caller in rows:
        if abs(change) >= args.min:
            print("| %+.2f | %.2f | %.2f | `%s` |" % (change, old.get(caller, 0), new.get(caller, 0), caller[:300]))


if __name__ == "__main__":
    main()
