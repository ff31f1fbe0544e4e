#!/usr/bin/env python3
"""Runs the mutant package's tests once per mutant and tallies the verdicts (issue #24 condition 6).

Reads DIR/mutants.tsv (written by schemata.py), runs the test binary once with no mutant (everything must pass),
then once per mutant with BEARER_MUTANT set: a mutant is killed when the run fails — a test that expected the refusal
records an issue, or the process traps — and survives when every test passes. Prints each survivor with its site
and exits 1 if any survive. Writes DIR/verdicts.tsv: each mutant and the tests that killed it.

    verdicts.py --dir DIR --binary TEST_BINARY [--jobs 2] [--only 3,17]
"""

import argparse
import concurrent.futures
import csv
import os
import pathlib
import re
import subprocess
import sys
import time

# swift-testing's line for an issue: `✘ Test "display name" recorded an issue with 1 argument refusal → the case's
# description at File.swift:12:9: …` (the description may run on over lines of its own; the first is kept).
ISSUE = re.compile(
    r'(?:^|\s)\S+ Test (?:"(.+?)"|(\S+)) recorded an issue(?: with \d+ arguments? (.*?)(?: at \S+:\d+:\d+:|$))?'
)
TIMEOUT = 120


def run(binary, mutant):
    env = dict(os.environ)
    env.pop("BEARER_MUTANT", None)
    if mutant:
        env["BEARER_MUTANT"] = str(mutant)
    # No backtrace: a trap is a kill, and symbolicating it would cost seconds per mutant.
    env["SWIFT_BACKTRACE"] = "enable=no"
    try:
        result = subprocess.run(
            [binary, "--testing-library", "swift-testing"],
            env=env,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        return mutant, "timeout", []
    if result.returncode == 0:
        return mutant, "survived", []
    failed = []
    issues = []
    output = result.stdout + "\n" + result.stderr
    for line in output.splitlines():
        match = ISSUE.search(line)
        if match:
            name = match.group(1) or match.group(2)
            if match.group(3):
                name += f" [{match.group(3)[:100]}]"
            if name not in failed:
                failed.append(name)
            issues.append(line)
        elif line.startswith("\x1b") or re.match(r"^\S+ (Test|Suite) ", line):
            issues.append("")
        elif issues and issues[-1]:
            # An argument's description printed its own line breaks: the issue goes on here.
            issues[-1] += "\n" + line
    # `expected error X …, but Y … was thrown instead`: the input is still refused, for another reason.
    refused_otherwise = all("was thrown instead" in issue for issue in issues if issue)
    if result.returncode > 0 and failed:
        return mutant, "killed (another reason)" if refused_otherwise else "killed", failed
    # A trap (a signal) or an exit without an issue: the process died, no test said why.
    return mutant, f"crashed (status {result.returncode})", [" | ".join(output.splitlines()[-40:])]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", type=pathlib.Path, required=True)
    parser.add_argument("--binary", required=True)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--only", default="", help="comma-separated mutant numbers (default: all)")
    args = parser.parse_args()

    with open(args.dir / "mutants.tsv", newline="") as file:
        mutants = {int(row["id"]): row for row in csv.DictReader(file, delimiter="\t")}
    chosen = [int(each) for each in args.only.split(",") if each] or sorted(mutants)

    start = time.monotonic()
    _, verdict, details = run(args.binary, 0)
    if verdict != "survived":
        print(f"mutants: the tests fail with no mutant ({verdict}): {details}", file=sys.stderr)
        sys.exit(2)

    verdicts = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for mutant, verdict, details in pool.map(lambda each: run(args.binary, each), chosen):
            verdicts[mutant] = (verdict, details)

    rows = ["id\tfile\tline\tkind\tdetail\tverdict\ttests"]
    for mutant in chosen:
        row = mutants[mutant]
        verdict, details = verdicts[mutant]
        tests = "; ".join(details).replace("\t", " ") if verdict != "survived" else ""
        rows.append("\t".join([str(mutant), row["file"], row["line"], row["kind"], row["detail"], verdict, tests]))
    (args.dir / "verdicts.tsv").write_text("\n".join(rows) + "\n")

    def site(mutant):
        row = mutants[mutant]
        return f"#{mutant} {row['file']}:{row['line']} ({row['detail']}): {row['source']}"

    equivalent = [mutant for mutant in chosen if mutants[mutant]["equivalent"]]
    survivors = [m for m in chosen if verdicts[m][0] == "survived" and m not in equivalent]
    crashed = [m for m in chosen if verdicts[m][0].startswith(("crashed", "timeout"))]
    otherwise = [m for m in chosen if verdicts[m][0] == "killed (another reason)"]
    wrongly_equivalent = [m for m in equivalent if verdicts[m][0] != "survived"]
    for mutant in otherwise:
        print(f"  needed for its reason (off, the input is refused by another rule): {site(mutant)}")
    for mutant in crashed:
        print(f"  killed by a crash or a timeout, not by a test's issue: {site(mutant)}")
    for mutant in equivalent:
        if mutant not in wrongly_equivalent:
            print(f"  equivalent (listed in schemata.py): {site(mutant)}")
    for mutant in wrongly_equivalent:
        print(f"  LISTED AS EQUIVALENT BUT KILLED: {site(mutant)}")
    for mutant in survivors:
        print(f"  SURVIVED: {site(mutant)}")
    killed = len(chosen) - len(survivors) - len(equivalent) + len(wrongly_equivalent)
    print(
        f"mutants: {len(chosen)} run: {killed} killed ({len(otherwise)} of them only by the reason, {len(crashed)} by "
        f"a crash or a timeout), {len(equivalent) - len(wrongly_equivalent)} equivalent, {len(survivors)} survived; "
        f"{time.monotonic() - start:.1f} s, {args.jobs} at a time. Each mutant's killers: {args.dir / 'verdicts.tsv'}"
    )
    sys.exit(1 if survivors or wrongly_equivalent else 0)


if __name__ == "__main__":
    main()
