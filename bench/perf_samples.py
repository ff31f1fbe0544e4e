"""The stacks of `perf script -F ip,sym` output, shared by bench/callers-diff.py and bench/callsites.py."""


def stacks(lines):
    """Each sample's stack, innermost frame first, as (address, symbol) pairs ("?" when perf names none)."""
    stack = []
    for line in lines:
        line = line.strip()
        if not line:
            if stack:
                yield stack
            stack = []
            continue
        parts = line.split(None, 1)
        stack.append((parts[0], parts[1] if len(parts) > 1 else "?"))
    if stack:
        yield stack
