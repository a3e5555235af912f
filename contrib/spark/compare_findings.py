#!/usr/bin/env python3
"""Compares the Spark job's findings with `mcpsift check --format json`, as multisets of
(rule, severity, capture, session, rpc_id, tool).

usage: compare_findings.py LABEL SPARK_OUT CHECK_JSON
  SPARK_OUT   the job's --out folder (reads SPARK_OUT/findings_json/*.json)
  CHECK_JSON  the output of `mcpsift check ... --format json`
Rules the job could not run (SPARK_OUT/rules.json "not_run": a rule reading a table the dataset
does not hold) are left out of the comparison and named. Prints one line (and the
differences); exits 1 when they differ.
"""
import collections
import glob
import json
import os
import sys


def key(f):
    return (f["rule"], f["severity"], f["capture"], f.get("session"), f.get("rpc_id"), f.get("tool"))


def main():
    label, out, check_json = sys.argv[1:4]
    spark = [json.loads(line) for p in sorted(glob.glob(out + "/findings_json/*.json")) for line in open(p, encoding="utf-8") if line.strip()]
    with open(check_json, encoding="utf-8") as f:
        check = json.load(f)["findings"]
    rules_json = os.path.join(out, "rules.json")
    not_run = json.load(open(rules_json, encoding="utf-8")).get("not_run", {}) if os.path.exists(rules_json) else {}
    for rule in sorted(not_run):
        n = sum(1 for f in check if f["rule"] == rule)
        print(f"{label}: not compared: rule {rule} ({n} finding(s) in mcpsift check): not run in Spark: {not_run[rule][:120]}")
    check = [f for f in check if f["rule"] not in not_run]
    a, b = collections.Counter(map(key, spark)), collections.Counter(map(key, check))
    rules = len({k[0] for k in b})
    print(f"{label}: Spark {len(spark)} finding(s), mcpsift check {len(check)} ({rules} rule(s), {len({k[2] for k in b})} capture(s)): " + ("same findings" if a == b else "DIFFERENT"))
    for k, n in sorted((a - b).items(), key=str)[:20]:
        print("  only Spark:", k, n)
    for k, n in sorted((b - a).items(), key=str)[:20]:
        print("  only check:", k, n)
    return 0 if a == b else 1


if __name__ == "__main__":
    sys.exit(main())
