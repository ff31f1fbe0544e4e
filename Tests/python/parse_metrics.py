#!/usr/bin/env python3
"""Parses Prometheus text exposition from stdin with prometheus_client's own parser (an independent
implementation of the format) and prints {"name{labels}": value} as JSON. Exits non-zero if it does not parse."""
import json
import sys

from prometheus_client.parser import text_string_to_metric_families


def main() -> int:
    samples = {}
    for family in text_string_to_metric_families(sys.stdin.read()):
        for sample in family.samples:
            labels = ",".join(f'{key}="{value}"' for key, value in sorted(sample.labels.items()))
            samples[f"{sample.name}{{{labels}}}"] = sample.value
    print(json.dumps(samples, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
