"""Parses Prometheus text (stdin) with the reference parser, prometheus_client's,
and prints its samples as JSON: a list of [name, labels, value], plus each
family's type. A malformed exposition raises, and the script exits non-zero."""
import json
import sys

from prometheus_client.parser import text_string_to_metric_families

families = {}
samples = []
for family in text_string_to_metric_families(sys.stdin.read()):
    families[family.name] = family.type
    for s in family.samples:
        samples.append([s.name, s.labels, s.value])
json.dump({"types": families, "samples": samples}, sys.stdout)
