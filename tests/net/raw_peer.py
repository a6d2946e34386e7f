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
  raw_peer.py random HOST PORT COUNT SEED
      opens COUNT connections, each sending 1 to 64 KiB of random bytes
      (from SEED, so a failure replays), some of them after a valid BASP
      header prefix.

Each mode then reads until the server closes the connection or 3 s pass.
Exit status 0 when every connection could be made and written to (a server
that resets one early is fine), 1 otherwise.
"""

import random
import socket
import struct
import sys
import time

BASP_HEADER = ">BBBBIQQQ"  # operation, 2 padding, flags, payload_len, operation_data, 2 actor ids
CLIENT_HANDSHAKE = 0x01
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


def header(payload_len):
    return struct.pack(BASP_HEADER, CLIENT_HANDSHAKE, 0, 0, 0, payload_len, BASP_VERSION, 0, 0)


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
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
