#!/usr/bin/env python3
"""Raw TCP peers of a `proofline serve` for the net tests: what anyone who can
reach the port can send without credentials.

  raw_peer.py garbage HOST PORT
      sends an HTTP request and 4 KiB of bytes that are no BASP header.
  raw_peer.py basp32 HOST PORT
      sends one byte 0x01 and 31 zero bytes: a CAF 0.17.6 BASP header of a
      client handshake announcing an empty payload (CAF 0.17.6 alone
      dereferences a null pointer on it and dies; proofline's BASP guard
      closes the connection).
  raw_peer.py truncated HOST PORT
      sends the first 16 bytes of a BASP header, then closes.
  raw_peer.py oversize HOST PORT BYTES HOLD_S [SERVER_PID]
      sends one BASP header announcing a client handshake whose payload is
      BYTES long (at most 2^32 - 1), holds the connection HOLD_S seconds
      without sending the payload, printing the server's peak resident
      memory meanwhile when SERVER_PID is given, then closes.
  raw_peer.py announce HOST PORT BYTES COUNT HOLD_S SERVER_PID [handshake]
      opens COUNT connections, each sending one 32-byte BASP header that
      announces a payload of BYTES and nothing of it, and holds them HOLD_S
      seconds, printing the server's peak resident memory meanwhile. The
      header is a client handshake's; with "handshake" (plain-text listeners
      only) each connection first completes a BASP handshake with a node ID
      of its own and then announces a direct message. Prints
      "peak_rss_mib=N closed=N" (closed: connections the server closed).
  raw_peer.py random HOST PORT COUNT SEED
      opens COUNT connections, each sending 1 to 64 KiB of random bytes
      (from SEED, so a failure replays), some of them after a valid BASP
      header prefix.
  raw_peer.py flood HOST PORT COUNT HOLD_S
      opens COUNT connections that send nothing and holds them HOLD_S
      seconds, then prints how many the server closed and when:
      "opened=N refused=N closed=N open=N last_close_s=S" (refused: never
      connected, closed by the time all were opened, or within 1 s of the
      connect; closed: later, the latest after S seconds; open: still open
      at the end).
  raw_peer.py slowloris HOST PORT COUNT HOLD_S tls|basp
      as flood, but each connection sends the start of a handshake that
      never ends, one byte a second: a TLS record header announcing 16 KiB
      of ClientHello, or a BASP header.

garbage, basp32, truncated, oversize and random then read until the server
closes the connection or 3 s pass. Exit status 0 when every connection could
be made and written to (a server that resets one early is fine), 1
otherwise; flood and slowloris exit 0 whatever the server did.
"""

import random
import selectors
import socket
import struct
import sys
import time

BASP_HEADER = ">BBBBIQQQ"  # operation, 2 padding, flags, payload_len, operation_data, 2 actor ids
CLIENT_HANDSHAKE = 0x01
DIRECT_MESSAGE = 0x02
BASP_VERSION = 3


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) // 1024
    return -1


def converse(host, port, payload, hold=0.0, pid=0):
    """Sends payload, holds the connection, drains; returns peak RSS or -1."""
    s = socket.create_connection((host, port), timeout=5)
    try:
        s.sendall(payload)
    except (BrokenPipeError, ConnectionResetError):
        s.close()
        return -1
    peak = -1
    end = time.time() + hold
    while time.time() < end:
        if pid:
            peak = max(peak, rss_mib(pid))
        time.sleep(0.1)
    s.settimeout(3)
    try:
        while s.recv(65536):
            pass
    except (socket.timeout, ConnectionResetError):
        pass
    s.close()
    return peak


def header(payload_len, operation=CLIENT_HANDSHAKE, dest_actor=0):
    data = BASP_VERSION if operation == CLIENT_HANDSHAKE else 0
    return struct.pack(BASP_HEADER, operation, 0, 0, 0, payload_len, data, 0, dest_actor)


def recv_exactly(s, n):
    data = b""
    while len(data) < n:
        chunk = s.recv(n - len(data))
        if not chunk:
            raise ConnectionError("the server closed the connection")
        data += chunk
    return data


def handshake(s, index):
    """Completes a BASP handshake on s as a node of its own: reads the
    server's handshake and answers with a node ID made from the server's
    (CAF's default node ID: an 8-byte atom, a 4-byte process id, a 20-byte
    host id) with another process id."""
    hdr = recv_exactly(s, struct.calcsize(BASP_HEADER))
    payload_len = struct.unpack(BASP_HEADER, hdr)[4]
    payload = recv_exactly(s, payload_len)
    atom, pid, host = payload[:8], struct.unpack(">I", payload[8:12])[0], payload[12:32]
    node = atom + struct.pack(">I", (pid + 1000 + index) % (1 << 32)) + host
    s.sendall(header(len(node)) + node)


def announce(host, port, size, count, hold, pid, after_handshake):
    """Sends the announcements, holds them, returns (peak RSS, closed)."""
    socks = []
    for i in range(count):
        s = socket.create_connection((host, port), timeout=5)
        if after_handshake:
            handshake(s, i)
            s.sendall(header(size, DIRECT_MESSAGE, dest_actor=1))
        else:
            s.sendall(header(size))
        socks.append(s)
    peak = rss_mib(pid)
    end = time.time() + hold
    while time.time() < end:
        peak = max(peak, rss_mib(pid))
        time.sleep(0.05)
    closed = 0
    for s in socks:
        s.setblocking(False)
        try:
            while True:
                data = s.recv(65536)
                if not data:
                    closed += 1
                    break
        except (BlockingIOError, InterruptedError):
            pass
        except OSError:
            closed += 1
        s.close()
    return peak, closed


def slow_prefix(kind):
    """The start of a handshake that never ends, sent a byte a second: a TLS
    record header announcing a 16 KiB handshake message, or a BASP client
    handshake header."""
    if kind == "tls":
        return b"\x16\x03\x01\x40\x00"
    if kind == "basp":
        return header(32)
    return b""


def hold_connections(host, port, count, hold, kind):
    """Opens count connections, holds them, prints what the server did."""
    prefix = slow_prefix(kind)
    sel = selectors.DefaultSelector()
    start = time.time()
    opened, refused, closed, last_close = 0, 0, 0, 0.0
    live = {}
    for _ in range(count):
        t0 = time.time()
        try:
            s = socket.create_connection((host, port), timeout=2)
        except OSError:
            refused += 1
            continue
        opened += 1
        s.setblocking(False)
        live[s] = {"connected": t0, "sent": 0}
        sel.register(s, selectors.EVENT_READ)

    first_pass = True  # EOFs seen right after the connects are refusals, however long those took

    def gone(s, now):
        nonlocal refused, closed, last_close
        if first_pass or now - live[s]["connected"] < 1.0:
            refused += 1
        else:
            closed += 1
            last_close = max(last_close, now - live[s]["connected"])
        sel.unregister(s)
        s.close()
        del live[s]

    next_byte = time.time()
    end = start + hold
    while live and time.time() < end:
        events = sel.select(timeout=0.2 if first_pass else 0.1)
        for key, _ in events:
            s = key.fileobj
            try:
                data = s.recv(65536)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                data = b""
            if not data:
                gone(s, time.time())
        first_pass = False
        if prefix and time.time() >= next_byte:
            next_byte += 1.0
            for s in list(live):
                state = live[s]
                if state["sent"] < len(prefix):
                    try:
                        s.send(prefix[state["sent"]:state["sent"] + 1])
                        state["sent"] += 1
                    except OSError:
                        gone(s, time.time())
    still = len(live)
    for s in list(live):
        s.close()
    print(f"opened={opened} refused={refused} closed={closed} open={still} "
          f"last_close_s={last_close:.1f}")


def main(argv):
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    mode, host, port = argv[1], argv[2], int(argv[3])
    if mode == "garbage":
        converse(host, port, b"GET / HTTP/1.1\r\nHost: proofline\r\n\r\n" +
                 bytes((0xFF - i) % 256 for i in range(4096)))
        print("garbage sent")
    elif mode == "basp32":
        packet = b"\x01" + b"\x00" * 31
        assert len(packet) == struct.calcsize(BASP_HEADER) == 32
        converse(host, port, packet)
        print("32-byte handshake header sent")
    elif mode == "truncated":
        converse(host, port, header(64)[:16])
        print("16 bytes of a header sent")
    elif mode == "oversize" and len(argv) >= 6:
        size, hold = int(argv[4]), float(argv[5])
        pid = int(argv[6]) if len(argv) > 6 else 0
        peak = converse(host, port, header(size), hold, pid)
        print(f"announced {size} bytes; server RSS peaked at {peak} MiB while connected")
    elif mode == "random" and len(argv) >= 6:
        count, seed = int(argv[4]), int(argv[5])
        rng = random.Random(seed)
        for i in range(count):
            body = rng.randbytes(rng.randint(1, 65536))
            if i % 3 == 1:
                body = header(rng.randint(0, 1 << 20))[: rng.randint(1, 32)] + body
            converse(host, port, body)
        print(f"{count} random bursts sent (seed {seed})")
    elif mode == "announce" and len(argv) >= 8:
        size, count, hold, pid = int(argv[4]), int(argv[5]), float(argv[6]), int(argv[7])
        after = len(argv) > 8 and argv[8] == "handshake"
        peak, closed = announce(host, port, size, count, hold, pid, after)
        print(f"peak_rss_mib={peak} closed={closed}")
    elif mode in ("flood", "slowloris") and len(argv) >= 6:
        count, hold = int(argv[4]), float(argv[5])
        kind = argv[6] if mode == "slowloris" and len(argv) > 6 else None
        if mode == "slowloris" and kind not in ("tls", "basp"):
            print(__doc__, file=sys.stderr)
            return 2
        hold_connections(host, port, count, hold, kind)
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
