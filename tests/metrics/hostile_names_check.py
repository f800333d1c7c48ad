#!/usr/bin/env python3
"""Parses every exposition hostile_names_main.cc renders, as Prometheus would.

For each OUT_DIR/*.prom: the text must be UTF-8 (one bad byte fails a real
scrape whole), prometheus_client's parser (text_string_to_metric_families)
must read every sample line, no series (sample name and labels) may appear
twice, no family may be declared twice, and a label value must hold no
control character but none at all. Where a file has both partitions, users
and classes must count the same arrivals (summing duplicates away must not
lose or double any).

Usage: hostile_names_check.py RENDER_PROGRAM
"""

import glob
import os
import subprocess
import sys
import tempfile
import unicodedata

from prometheus_client.parser import text_string_to_metric_families

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


def check_file(path):
    name = os.path.basename(path)
    with open(path, "rb") as f:
        raw = f.read()
    try:
        text = raw.decode("utf-8", errors="strict")
    except UnicodeDecodeError as e:
        check(False, f"{name}: not UTF-8 ({e})")
        return
    try:
        families = list(text_string_to_metric_families(text))
    except Exception as e:  # the parser's own errors are plain exceptions
        check(False, f"{name}: prometheus_client cannot parse it: {e}")
        return
    sample_lines = [l for l in text.split("\n") if l and not l.startswith("#")]
    parsed = sum(len(f.samples) for f in families)
    check(parsed == len(sample_lines),
          f"{name}: {len(sample_lines)} sample lines but the parser read {parsed}")
    type_lines = [l.split()[2] for l in text.split("\n") if l.startswith("# TYPE ")]
    twice = {t for t in type_lines if type_lines.count(t) > 1}
    check(not twice, f"{name}: families declared twice: {sorted(twice)}")
    seen = set()
    for family in families:
        for s in family.samples:
            key = (s.name, tuple(sorted(s.labels.items())))
            check(key not in seen, f"{name}: series twice: {s.name}{s.labels}")
            seen.add(key)
            for label, value in s.labels.items():
                bad = [c for c in value if unicodedata.category(c) == "Cc"
                       or c in "\u2028\u2029"]
                check(not bad, f"{name}: {s.name} label {label}={value!r} holds {bad}")
    by_name = {f.name: f for f in families}

    def arrived(family):
        f = by_name.get(family)
        return None if f is None else sum(
            s.value for s in f.samples if s.name.endswith("_total"))

    classes, users = arrived("hearth_requests_arrived"), arrived("hearth_user_requests_arrived")
    if classes is not None and users is not None:
        check(classes == users and classes > 0,
              f"{name}: classes count {classes} arrivals, users {users}")
    print(f"{name}: {len(families)} families, {parsed} samples, {len(seen)} series")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([sys.argv[1], out], check=True)
        files = sorted(glob.glob(os.path.join(out, "*.prom")))
        check(len(files) == 5, f"expected 5 expositions, got {[os.path.basename(f) for f in files]}")
        for path in files:
            check_file(path)
    for f in failures:
        print("FAIL:", f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
