#!/usr/bin/env python3
"""Hostile HTTP clients of a `proofline serve --metrics` endpoint, for the net
tests.

  http_peer.py bomb HOST PORT MIB SERVER_PID
      sends a request line and then MIB MiB of header lines on one
      connection, as fast as the server takes them, sampling the server's
      resident memory meanwhile; prints "sent_mib=N peak_rss_mib=N
      before_rss_mib=N status=S" (S: the status line the server answered,
      or "none").
  http_peer.py slowloris HOST PORT COUNT SECONDS
      opens COUNT connections that send a request head one byte every
      200 ms, and meanwhile asks /healthz and /readyz every 100 ms for
      SECONDS seconds (3 s at most each); prints "probes=N failed=N
      worst_ms=N slow_closed=N" (failed: probes without a 200; slow_closed:
      slow connections the server closed by the end).

Exit status 0 once the clients ran, whatever the server did; 2 on bad
arguments.
"""

import socket
import sys
import threading
import time


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) // 1024
    return -1


def bomb(host, port, mib, pid):
    before = rss_mib(pid)
    peak = [before]
    done = threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], rss_mib(pid))
            time.sleep(0.01)

    sampler = threading.Thread(target=sample)
    sampler.start()
    s = socket.create_connection((host, port), timeout=5)
    block = b"".join(b"X-Bomb-%d: %s\r\n" % (i, b"b" * 1000) for i in range(64))
    sent = 0
    try:
        s.sendall(b"GET /metrics HTTP/1.1\r\n")
        while sent < mib << 20:
            s.sendall(block)
            sent += len(block)
    except OSError:
        pass  # the server closed the connection
    status = "none"
    try:
        s.settimeout(3)
        reply = s.recv(4096)
        if reply:
            status = reply.split(b"\r\n", 1)[0].decode(errors="replace").replace(" ", "_")
    except OSError:
        pass
    s.close()
    time.sleep(0.2)
    done.set()
    sampler.join()
    print(f"sent_mib={sent >> 20} peak_rss_mib={peak[0]} before_rss_mib={before} status={status}")


def probe(host, port, path):
    """(milliseconds, ok) of one GET of path."""
    start = time.time()
    ok = False
    try:
        s = socket.create_connection((host, port), timeout=3)
        s.settimeout(3)
        s.sendall(b"GET " + path.encode() + b" HTTP/1.1\r\nHost: x\r\n\r\n")
        reply = b""
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            reply += chunk
        ok = reply.startswith(b"HTTP/1.1 200 ")
        s.close()
    except OSError:
        pass
    return int((time.time() - start) * 1000), ok


def slowloris(host, port, count, seconds):
    head = b"GET /metrics HTTP/1.1\r\nX-Slow: " + b"s" * 4096
    slow = [socket.create_connection((host, port), timeout=5) for _ in range(count)]
    closed = [False] * count
    stop = threading.Event()

    def trickle():
        i = 0
        while not stop.is_set():
            for k, s in enumerate(slow):
                if closed[k]:
                    continue
                try:
                    s.send(head[i % len(head):i % len(head) + 1])
                except OSError:
                    closed[k] = True
            i += 1
            time.sleep(0.2)

    t = threading.Thread(target=trickle)
    t.start()
    probes, failed, worst = 0, 0, 0
    end = time.time() + seconds
    while time.time() < end:
        for path in ("/healthz", "/readyz"):
            ms, ok = probe(host, port, path)
            probes += 1
            failed += 0 if ok else 1
            worst = max(worst, ms)
        time.sleep(0.1)
    stop.set()
    t.join()
    for k, s in enumerate(slow):
        s.setblocking(False)
        try:
            while True:
                data = s.recv(4096)
                if not data:
                    closed[k] = True
                    break
        except (BlockingIOError, InterruptedError):
            pass
        except OSError:
            closed[k] = True
        s.close()
    print(f"probes={probes} failed={failed} worst_ms={worst} slow_closed={sum(closed)}")


def main(argv):
    if len(argv) == 6 and argv[1] == "bomb":
        bomb(argv[2], int(argv[3]), int(argv[4]), int(argv[5]))
    elif len(argv) == 6 and argv[1] == "slowloris":
        slowloris(argv[2], int(argv[3]), int(argv[4]), float(argv[5]))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
