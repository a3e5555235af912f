#!/usr/bin/env python3
"""Transparent stdio tee: tee_shim.py --out DIR -- server-command [args...]

The MCP client spawns this shim instead of the server. The shim spawns the real server and
copies bytes unchanged in both directions, appending every chunk to
  DIR/c2s.log   bytes the client wrote to the server's stdin
  DIR/s2c.log   bytes the server wrote to its stdout
  DIR/server.stderr.log  the server's stderr (also forwarded to our stderr)
  DIR/chunks.jsonl  one record per pipe read: dir, ts_us, n (used to timestamp lines)
  DIR/shim_events.json  spawn / eof / exit events
Standard library only; no buffering or transformation of the payload.
"""
import json, os, subprocess, sys, threading, time


def now_us():
    return time.time_ns() // 1000


def main():
    argv = sys.argv[1:]
    if len(argv) < 3 or argv[0] != "--out" or argv[2] != "--":
        sys.stderr.write("usage: tee_shim.py --out DIR -- cmd [args...]\n")
        return 2
    out, cmd = argv[1], argv[3:]
    os.makedirs(out, exist_ok=True)
    events = []
    lock = threading.Lock()
    chunks = open(os.path.join(out, "chunks.jsonl"), "w")

    def ev(kind, **kw):
        with lock:
            events.append({"ts_us": now_us(), "event": kind, **kw})

    errf = open(os.path.join(out, "server.stderr.log"), "wb")
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, bufsize=0)
    ev("spawn", pid=proc.pid, cmd=cmd)
    totals = {"c2s": 0, "s2c": 0}

    def pump(src_fd, dst_fd, name, close_dst):
        log = open(os.path.join(out, f"{name}.log"), "wb") if name != "stderr" else errf
        while True:
            try:
                data = os.read(src_fd, 1 << 16)
            except OSError:
                data = b""
            if not data:
                break
            ts = now_us()
            log.write(data)
            log.flush()
            if name != "stderr":
                totals[name] += len(data)
                with lock:
                    chunks.write(json.dumps({"dir": name, "ts_us": ts, "n": len(data)}) + "\n")
            try:
                view = memoryview(data)
                while view:
                    w = os.write(dst_fd, view)
                    view = view[w:]
            except OSError:
                pass
        if name != "stderr":
            ev(f"{name}_eof")
            log.close()
        if close_dst:
            try:
                os.close(dst_fd)
            except OSError:
                pass

    t_in = threading.Thread(target=pump, args=(sys.stdin.fileno(), proc.stdin.fileno(), "c2s", True), daemon=True)
    t_out = threading.Thread(target=pump, args=(proc.stdout.fileno(), sys.stdout.fileno(), "s2c", False), daemon=True)
    t_err = threading.Thread(target=pump, args=(proc.stderr.fileno(), sys.stderr.fileno(), "stderr", False), daemon=True)
    for t in (t_in, t_out, t_err):
        t.start()
    t_out.join()
    t_err.join()
    rc = proc.wait()
    ev("server_exit", code=rc if rc >= 0 else None, signal=-rc if rc < 0 else None)
    ev("shim_exit", c2s_bytes=totals["c2s"], s2c_bytes=totals["s2c"])
    chunks.close()
    errf.close()
    with open(os.path.join(out, "shim_events.json"), "w") as f:
        json.dump(events, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
