"""Call sites of one runtime call, per request, by source line: reads `perf script -F ip,sym` of a run of
bench/counts.sh (frame-pointer stacks, one sample per call) on stdin.

    python3 bench/callsites.py BINARY REQUESTS CALL < samples

Each sample's call site is the return address in the first frame that is not the runtime's; an outlined value-witness
helper (`outlined copy of X`, `initializeWithCopy for X`, …) is charged to the line that called it, and named. The
address is read back to its line with llvm-symbolizer, inlined frames first, so a call made inside an inlined
function names both that function's line and the line that inlined it.
"""

import collections
import re
import subprocess
import sys

import perf_samples

binary, requests, call = sys.argv[1], float(sys.argv[2]), sys.argv[3]
HELPER = re.compile(
    r"^(outlined |initializeWithCopy|initializeWithTake|destroy for|assignWith|initializeBufferWithCopyOfBuffer|\?\?)"
)


def demangle(names):
    names = sorted(set(names))
    out = subprocess.run(
        ["swift-demangle", "--simplified", "--compact"], input="\n".join(names), capture_output=True, text=True
    ).stdout.splitlines()
    return dict(zip(names, out)) if len(out) == len(names) else {name: name for name in names}


stacks = list(perf_samples.stacks(sys.stdin))
names = demangle(symbol for stack in stacks for _, symbol in stack[:8])
sites = collections.Counter()
for stack in stacks:
    via = []
    for address, symbol in stack[1:]:
        pretty = names.get(symbol, symbol)
        if symbol.startswith(("swift_", "_swift")) or HELPER.match(pretty):
            via.append(pretty.split(" for ")[-1].split("(")[0][:50])
            continue
        sites[(int(address, 16) - 1, via[0] if via else "")] += 1
        break
addresses = sorted({address for address, _ in sites})
symbolized = subprocess.run(
    ["llvm-symbolizer", "--obj=" + binary, "--inlining", "--functions=short", "--no-demangle"],
    input="\n".join(hex(address) for address in addresses),
    capture_output=True,
    text=True,
).stdout.strip("\n").split("\n\n")
frames = {}
for address, block in zip(addresses, symbolized):
    lines = block.split("\n")
    frames[address] = [(lines[i], lines[i + 1]) for i in range(0, len(lines) - 1, 2)]
functions = demangle(function for chain in frames.values() for function, _ in chain)
rows = collections.Counter()
for (address, via), count in sites.items():
    chain = " <- ".join(
        "%s@%s" % (functions.get(f, f).split("(")[0][-40:], where.split("/")[-1]) for f, where in frames[address][:3]
    )
    rows[chain + (" (via %s)" % via if via else "")] += count
print()
print("| call site of %s (source line, inlined frames first) | per request |" % call)
print("|---|---|")
for row, count in rows.most_common():
    if count / requests >= 0.5:
        print("| `%s` | %.2f |" % (row.replace("|", "\\|"), count / requests))
print()
print("(%.1f a request in all; sites under 0.5 a request left out)" % (sum(sites.values()) / requests))
