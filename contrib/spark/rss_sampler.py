#!/usr/bin/env python3
"""Runs a command and samples the resident memory of it and every descendant (from /proc, every
0.2 s) until it exits; prints the peak RSS per kind of process (java, python, mcpsift, ...) and
the peak of their sum to stderr, and exits with the command's status.

usage: rss_sampler.py [--pids-from FILE] [--label TEXT] -- CMD...
  --pids-from FILE  also sample these processes (one PID a line, re-read every sample) and
                    their descendants: the Spark master and workers of run_cluster.sh.
"""
import os
import subprocess
import sys
import threading
import time


def children_map():
    kids = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat", "rb") as f:
                stat = f.read().decode(errors="replace")
            ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        except (OSError, ValueError):
            continue
        kids.setdefault(ppid, []).append(int(d))
    return kids


def rss_and_kind(pid):
    try:
        with open(f"/proc/{pid}/status", encoding="utf-8", errors="replace") as f:
            status = dict(line.split(":", 1) for line in f if ":" in line)
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
    except OSError:
        return 0, None
    rss = int(status.get("VmRSS", "0 kB").split()[0])
    exe = os.path.basename(argv[0].decode(errors="replace")) if argv and argv[0] else status.get("Name", "?").strip()
    kind = "python" if exe.startswith("python") else exe
    if kind == "python" and any(b"pyspark.daemon" in a or b"pyspark/daemon" in a or b"pyspark.worker" in a for a in argv):
        kind = "python (pyspark worker)"
    elif kind == "python":
        kind = "python (driver)"
    if kind == "java":
        joined = b" ".join(argv)
        kind = "java (" + ("executor" if b"CoarseGrainedExecutorBackend" in joined else "worker" if b"deploy.worker.Worker" in joined else "master" if b"deploy.master.Master" in joined else "driver") + ")"
    return rss, kind


def main():
    args = sys.argv[1:]
    pids_from, label = None, "rss"
    while args and args[0] != "--":
        if args[0] == "--pids-from":
            pids_from = args[1]
            args = args[2:]
        elif args[0] == "--label":
            label = args[1]
            args = args[2:]
        else:
            sys.exit(__doc__)
    cmd = args[1:]
    proc = subprocess.Popen(cmd)
    peak, peak_total, done = {}, [0], threading.Event()

    def sample():
        while not done.is_set():
            roots = [proc.pid]
            if pids_from and os.path.exists(pids_from):
                roots += [int(x) for x in open(pids_from).read().split() if x.isdigit()]
            kids, seen, stack, total = children_map(), set(), list(roots), 0
            while stack:
                pid = stack.pop()
                if pid in seen:
                    continue
                seen.add(pid)
                stack.extend(kids.get(pid, []))
                rss, kind = rss_and_kind(pid)
                if kind:
                    total += rss
                    peak[kind] = max(peak.get(kind, 0), rss)
            peak_total[0] = max(peak_total[0], total)
            done.wait(0.2)

    t = threading.Thread(target=sample, daemon=True)
    t.start()
    rc = proc.wait()
    done.set()
    t.join()
    parts = ", ".join(f"{k} {v / 1024:.0f} MiB" for k, v in sorted(peak.items(), key=lambda kv: -kv[1]))
    print(f"{label}: peak RSS per process: {parts}; peak of the sum {peak_total[0] / 1024:.0f} MiB", file=sys.stderr)
    sys.exit(rc)


if __name__ == "__main__":
    main()
