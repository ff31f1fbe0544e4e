#!/usr/bin/env python3
"""Mutant schemata for BearerCodec's refusal rules (issue #24 condition 6).

Reads Sources/BearerCodec/Grammar/*.swift, finds every `throw` (and `return false` of PREDICATES), and writes a COPY of
the codec in which each refusal rule can be switched off at run time: `BEARER_MUTANT=N` disables rule N, no variable
disables none. One build holds every mutant (the "schemata" technique of Untch, Offutt and Harrold, 1993), so the
check builds once and runs the tests once per mutant. The product's sources are only read.

A refusal rule is one condition that makes the codec refuse:

- `guard C1, C2, ... else { throw E }`: each clause Ci is a rule of its own, disabled as `Ci || Mutant.on(N)`
  (the clause is still evaluated, so a `try` in it still stops at the end of the bytes at hand: only its verdict
  is ignored).
- any other `throw E` (in an `if`, a `switch` case, an `else` branch, a `for ... where`): disabled as
  `if !Mutant.on(N) { throw E }`, so the code goes on as if the byte or field had been acceptable.
- the few sites where going on would not mean "acceptable" are rewritten by HAND_RULES below;
- re-throws and control flow that refuse nothing are SKIPPED below, each with the reason.

A new `throw` becomes a mutant by itself, so a rule cannot be added without the check seeing it; a guard this
cannot read, or a hand rule, skip or equivalence that matches no line any more, stops the generator.

    schemata.py --repo ROOT --out DIR      writes DIR/Package.swift, DIR/Sources, DIR/Tests, DIR/mutants.tsv
"""

import argparse
import pathlib
import re
import sys

CODEC = "Sources/BearerCodec/Grammar"
CODEC_TESTS = "Tests/BearerCodecTests"

# The codec's tests the mutants are run against: the deterministic, named ones that need nothing but the codec and
# NIOCore. Every file of Tests/BearerCodecTests must be listed here or in EXCLUDED_TESTS, so that a new test file
# is a decision, not an accident.
MUTANT_TESTS = [
    "Parsing.swift",
    "HeadParserTests.swift",
    "FieldLinesTests.swift",
    "RefusalRuleTests.swift",
    "ResponseHeadTests.swift",
]
EXCLUDED_TESTS = {
    "DifferentialFuzzTests.swift": "seeded fuzz against NIOHTTP1 (CodecFuzzing, NIOHTTP1, NIOEmbedded): it fails "
    "only where ours accepts what NIO refuses, and at 20,000 inputs per mutant it would be most of the run's time",
    "NIOReference.swift": "helper of DifferentialFuzzTests",
    "StrictReference.swift": "helper of DifferentialFuzzTests",
    "DecodedMessage.swift": "helper of DifferentialFuzzTests",
    "RealClientCodecTests.swift": "real clients' requests must be accepted: a mutant only ever accepts more, so "
    "this suite cannot kill one (the baseline run keeps it honest in the product's own test run)",
    "HeadBytesTests.swift": "the head writer (HeadBytes): it writes what it is given and refuses nothing, so no "
    "refusal mutant can fail it",
}

# Predicates whose `false` is a refusal although no `throw` is in them: UTF8Check's is the one `throw` of
# `.invalidUTF8` (HeadScanner), which switched off whole hides which of its checks the tests reach. In these files each
# `return false` is a site too.
PREDICATES = {"UTF8Check.swift"}

# Throws that refuse nothing themselves.
SKIPPED = {
    ("RequestHead.swift", "case .refused(let refusal): throw refusal"): "plumbing: parse(_:limits:) re-throws the "
    "scanner's refusal as HeadError at the API boundary; each refusal it carries is a site of its own",
    ("ResponseHead.swift", "case .refused(let refusal): throw refusal"): "plumbing: "
    "parse(_:requestWasHead:limits:) re-throws the scanner's refusal as HeadError; each refusal it carries is a site "
    "of its own",
}


# Guard clauses that no input can make matter: with the clause off, every input it refused is refused all the same,
# for the same reason, by the next rule. Listed with the proof; verdicts.py expects each to survive, and says so if
# one is killed (then the proof is wrong, or the code changed). (file, the clause) -> why.
EQUIVALENT = {
    ("FramingFields.swift", "index > start"): "noteConnection: the byte that ends an empty option is neither a comma "
    "nor whitespace (both are skipped before it) nor tchar, so the loop after it refuses the same byte with the same "
    ".connection",
    ("UTF8Check.swift", "end - index >= count"): "isWellFormed, as fieldLine calls it: the byte after a value's "
    "last is SP, HTAB or CR (valueEnd leaves out trailing whitespace and the line end), never a continuation byte, so "
    "a sequence cut short by the value's end fails the next check all the same; the clause keeps the check inside its "
    "range (#24 condition 1)",
    ("RequestHead.swift", "!target.isEmpty"): "requestTarget: an empty target is followed by its SP, so the "
    "absolute-form check reads an SP where `http` must start and refuses it with the same .requestTarget",
    ("RequestHead.swift", "index < target.upperBound"): "checkAbsoluteForm: the byte at target.upperBound is always "
    "the SP that ends the target, which never matches a letter of `http`, so the next clause refuses with the same "
    ".requestTarget; the clause keeps the scan inside the target (#24 condition 1) rather than refusing anything",
}


def advance_as_value(numbers, statement):
    # In fieldLine's value loop: going on without moving would read the same byte forever. Disabled, the byte is
    # taken as part of the value, which is what a parser without the rule does.
    indent = "\n                "
    return f"if !Mutant.on({numbers[0]}) {{ {statement} }}{indent}index += 1{indent}valueEnd = index"


def only_head_too_large(numbers, statement):
    # byte(at:in:) stops a scan at the end of the bytes at hand: `.incomplete` is plumbing (wait for more), and the
    # refusal is the head limit. Disabled, a head at the limit waits for more bytes instead of being refused.
    old = "available >= limits.headBytes"
    mutated = statement.replace(old, f"{old} && !Mutant.on({numbers[0]})")
    assert mutated != statement
    return mutated


def either(first, second):
    """For `if A || B { throw E }` (or a throw whose reason is `B ? x : y`), two rules: mutant 1 refuses only what B
    refuses, mutant 2 only what A refuses."""

    def rewrite(numbers, statement):
        return (
            f"if !(Mutant.on({numbers[0]}) && !({second})) && !(Mutant.on({numbers[1]}) && !({first})) "
            f"{{ {statement} }}"
        )

    return rewrite


# (file, the throw's line stripped) -> (what each of its mutants disables, rewrite(numbers, throw statement)).
HAND_RULES = {
    ("HeadScanner.swift", "throw available >= limits.headBytes ? .refused(.headTooLarge) : .incomplete"): (
        ["the headTooLarge half only (.incomplete is plumbing)"],
        only_head_too_large,
    ),
    ("HeadScanner.swift", "throw .refused(.malformed(.bareLF))"): (["the LF taken into the value"], advance_as_value),
    ("UTF8Check.swift", "default: return false"): (
        ["a byte that starts no UTF-8 sequence, taken as one byte"],
        lambda numbers, statement: f"if !Mutant.on({numbers[0]}) {{ {statement} }}\n                index += 1\n"
        "                continue",
    ),
    ("HeadScanner.swift", "throw .refused(.malformed(.fieldValue))"): (
        ["the control byte taken into the value"],
        advance_as_value,
    ),
    (
        "RequestHead.swift",
        "if byte == ASCII.cr || byte == ASCII.lf { throw .refused(.malformed(.leadingEmptyLine)) }",
    ): (
        ["a leading CR", "a leading LF"],
        either("byte == ASCII.cr", "byte == ASCII.lf"),
    ),
    ("ResponseHead.swift", "throw ScanStop.refused(.malformed(.informationalClosing))"): (
        ["an HTTP/1.0 1xx", "a 1xx with Connection: close"],
        either("minor == 0", "framing.connection.close"),
    ),
    (
        "ChunkedBody.swift",
        "throw .malformed(byte == ASCII.space || byte == ASCII.tab ? .spaceBeforeColon : .trailer)",
    ): (
        ["whitespace before a trailer's colon", "another byte in a trailer's name"],
        either("byte == ASCII.space || byte == ASCII.tab", "!(byte == ASCII.space || byte == ASCII.tab)"),
    ),
}

MUTANT_SWIFT = """\
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The mutation check's switch (Tests/mutants): `BEARER_MUTANT=N` disables refusal rule N; read once.
enum Mutant {
    static let active: Int = getenv("BEARER_MUTANT").flatMap { Int(String(cString: $0)) } ?? 0

    @inline(__always) static func on(_ number: Int) -> Bool { active == number }
}
"""

PACKAGE_SWIFT = """\
// swift-tools-version: 6.1
// Generated by Tests/mutants/schemata.py: BearerCodec with every refusal rule behind a switch, and its tests.
import PackageDescription

let package = Package(
    name: "bearer-codec-mutants",
    dependencies: [
        {nio}
    ],
    targets: [
        .target(name: "BearerCodec", dependencies: [.product(name: "NIOCore", package: "swift-nio")]),
        .testTarget(
            name: "BearerCodecTests",
            dependencies: ["BearerCodec", .product(name: "NIOCore", package: "swift-nio")]),
    ],
    swiftLanguageModes: [.v6]
)
"""


class Unclassified(Exception):
    pass


def line_of(text, offset):
    return text.count("\n", 0, offset) + 1


def line_text(text, offset):
    start = text.rfind("\n", 0, offset) + 1
    end = text.find("\n", offset)
    return text[start : end if end >= 0 else len(text)]


def statement_end(text, start):
    """Where the expression of a `throw` starting at `start` ends: the line's end, or a `}` that closes no bracket
    of its own (`guard C else { throw E }`)."""
    depth = 0
    index = start
    in_string = False
    while index < len(text):
        char = text[index]
        if in_string:
            if char == "\\":
                index += 1
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "([{":
            depth += 1
        elif char in ")]":
            depth -= 1
        elif char == "}":
            if depth == 0:
                break
            depth -= 1
        elif char == "\n" and depth == 0:
            break
        index += 1
    end = index
    while text[end - 1] in " \t":
        end -= 1
    return end


def split_clauses(text, start, end):
    """The top-level, comma-separated clauses of a condition list, as (start, end) offsets without whitespace."""
    clauses = []
    depth = 0
    in_string = False
    clause_start = start
    for index in range(start, end):
        char = text[index]
        if in_string:
            if char == '"' and text[index - 1] != "\\":
                in_string = False
            continue
        if char == '"':
            in_string = True
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "," and depth == 0:
            clauses.append((clause_start, index))
            clause_start = index + 1
    clauses.append((clause_start, end))
    trimmed = []
    for a, b in clauses:
        while text[a].isspace():
            a += 1
        while text[b - 1].isspace():
            b -= 1
        trimmed.append((a, b))
    return trimmed


def enclosing_guard(text, throw_start, throw_end):
    """For `guard C else { throw E }` (the else block holding only the throw), the condition's offsets; else None."""
    before = text[:throw_start].rstrip()
    if not before.endswith("{"):
        return None
    before = before[:-1].rstrip()
    if not re.search(r"\belse$", before):
        return None
    if not text[throw_end:].lstrip().startswith("}"):
        return None
    else_start = len(before) - len("else")
    if text[:else_start].rstrip().endswith("}"):
        return None  # `} else { throw E }`: the last branch of an `if`
    guard = None
    for match in re.finditer(r"\bguard\b", text[:else_start]):
        guard = match
    if guard is None:
        raise Unclassified(f"an `else {{ throw }}` with no guard before it at line {line_of(text, throw_start)}")
    if re.search(r"[{}]", text[guard.end() : else_start]):
        raise Unclassified(f"cannot read the guard before line {line_of(text, throw_start)}")
    return guard.end(), else_start


def codec_sites(repo):
    """Every throw of the codec (and every `return false` of a predicate file), classified: yields (file, text,
    sites), sites as dicts."""
    for path in sorted((repo / CODEC).glob("*.swift")):
        text = path.read_text()
        sites = []
        pattern = r"\bthrow\b|\breturn false\b" if path.name in PREDICATES else r"\bthrow\b"
        for match in re.finditer(pattern, text):
            start = match.start()
            line = line_text(text, start)
            if "//" in line[: line.find(match.group(0))]:
                continue
            stripped = line.strip()
            site = {"file": path.name, "line": line_of(text, start), "source": stripped, "start": start}
            site["end"] = statement_end(text, start)
            key = (path.name, stripped)
            if key in SKIPPED:
                site["kind"] = "skipped"
                site["why"] = SKIPPED[key]
            elif key in HAND_RULES:
                site["kind"] = "hand"
                site["why"], site["rewrite"] = HAND_RULES[key]
            else:
                condition = enclosing_guard(text, start, site["end"])
                if condition is not None:
                    site["kind"] = "guard"
                    site["clauses"] = split_clauses(text, *condition)
                else:
                    site["kind"] = "throw"
            sites.append(site)
        yield path.name, text, sites


def generate(repo, out):
    out.mkdir(parents=True, exist_ok=True)
    manifest = []
    skipped = []
    used_rules = set()
    number = 0
    files = {}
    for name, text, sites in codec_sites(repo):
        edits = []
        for site in sites:
            if site["kind"] == "skipped":
                skipped.append(site)
                used_rules.add((name, site["source"]))
                continue
            if site["kind"] == "guard":
                for index, (a, b) in enumerate(site["clauses"]):
                    number += 1
                    clause = text[a:b]
                    # `||` binds tighter than `? :`: a clause holding a ternary goes in parentheses.
                    if re.search(r"\?[^?.]", re.sub(r'"[^"]*"', '""', clause)):
                        clause = f"({clause})"
                    edits.append((a, b, f"{clause} || Mutant.on({number})"))
                    condition = " ".join(text[a:b].split())
                    detail = f"clause {index + 1} of {len(site['clauses'])}: {condition}"
                    equivalent = EQUIVALENT.get((name, condition), "")
                    if equivalent:
                        used_rules.add((name, condition))
                    manifest.append((number, name, site["line"], "guard", detail, site["source"], equivalent))
                continue
            statement = text[site["start"] : site["end"]]
            if site["kind"] == "hand":
                used_rules.add((name, site["source"]))
                numbers = list(range(number + 1, number + 1 + len(site["why"])))
                number = numbers[-1]
                edits.append((site["start"], site["end"], site["rewrite"](numbers, statement)))
                for each, why in zip(numbers, site["why"]):
                    manifest.append((each, name, site["line"], "hand", why, site["source"], ""))
            else:
                number += 1
                edits.append((site["start"], site["end"], f"if !Mutant.on({number}) {{ {statement} }}"))
                manifest.append((number, name, site["line"], "throw", statement, site["source"], ""))
        mutated = text
        for a, b, replacement in sorted(edits, reverse=True):
            mutated = mutated[:a] + replacement + mutated[b:]
        files[name] = mutated
    stale = set(HAND_RULES) | set(SKIPPED) | set(EQUIVALENT)
    stale -= used_rules
    if stale:
        raise Unclassified(
            "entries of HAND_RULES, SKIPPED or EQUIVALENT in Tests/mutants/schemata.py match no line of the codec any "
            f"more (the code changed: update or remove them): {sorted(stale)}"
        )

    sources = out / "Sources/BearerCodec"
    tests = out / "Tests/BearerCodecTests"
    write(sources / "Mutant.swift", MUTANT_SWIFT)
    for name, mutated in files.items():
        write(sources / name, mutated)
    known = set(MUTANT_TESTS) | set(EXCLUDED_TESTS)
    present = {path.name for path in (repo / CODEC_TESTS).glob("*.swift")}
    if present - known:
        raise Unclassified(
            f"{sorted(present - known)} in {CODEC_TESTS}: add each to MUTANT_TESTS or EXCLUDED_TESTS in "
            "Tests/mutants/schemata.py"
        )
    for name in MUTANT_TESTS:
        write(tests / name, (repo / CODEC_TESTS / name).read_text())
    for stale_file in list(sources.glob("*.swift")) + list(tests.glob("*.swift")):
        if stale_file.name not in files and stale_file.name not in MUTANT_TESTS and stale_file.name != "Mutant.swift":
            stale_file.unlink()
    root_manifest = (repo / "Package.swift").read_text()
    nio = re.search(r'\.package\(url: "https://github.com/apple/swift-nio",[^)]*\)', root_manifest)
    write(out / "Package.swift", PACKAGE_SWIFT.replace("{nio}", nio.group(0) + ","))
    rows = ["id\tfile\tline\tkind\tdetail\tsource\tequivalent"]
    rows += ["\t".join(str(field) for field in row) for row in manifest]
    write(out / "mutants.tsv", "\n".join(rows) + "\n")
    rows = ["file\tline\tsource\twhy"]
    rows += [f"{site['file']}\t{site['line']}\t{site['source']}\t{site['why']}" for site in skipped]
    write(out / "skipped.tsv", "\n".join(rows) + "\n")
    throws = len({(row[1], row[2]) for row in manifest})
    print(
        f"schemata: {throws + len(skipped)} refusal sites in {CODEC} (each `throw`; `return false` in "
        f"{', '.join(sorted(PREDICATES))}): {len(manifest)} mutants "
        f"({sum(1 for r in manifest if r[3] == 'guard')} guard clauses, "
        f"{sum(1 for r in manifest if r[3] == 'throw')} throws, {sum(1 for r in manifest if r[3] == 'hand')} by hand), "
        f"{len(skipped)} skipped; {sum(1 for r in manifest if r[6])} of the mutants equivalent"
    )
    for site in skipped:
        print(f"  skipped {site['file']}:{site['line']} `{site['source']}` — {site['why']}")


def write(path, content):
    """Writes only what changed, so that the scratch build stays incremental."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() and path.read_text() == content:
        return
    path.write_text(content)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", type=pathlib.Path, required=True)
    parser.add_argument("--out", type=pathlib.Path, required=True)
    args = parser.parse_args()
    try:
        generate(args.repo.resolve(), args.out)
    except Unclassified as error:
        print(f"schemata: {error}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
