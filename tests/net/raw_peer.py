#!/usr/bin/env python3
"""Raw TCP peers of a `proofline serve` for the net tests.

  raw_peer.py garbage HOST PORT
      sends an HTTP request and 4 KiB of bytes that are no BASP header, then
      reads until the server closes the connection (or 5 s pass).
  raw_peer.py oversize HOST PORT BYTES HOLD_S [SERVER_PID]
      reads the server's BASP handshake, sends one BASP header (CAF 0.17.6:
      32 bytes, network byte order) announcing a client handshake whose
      payload is BYTES long, holds the connection HOLD_S seconds without
      sending the payload, prints the server's resident memory meanwhile
      (when SERVER_PID is given), then closes.

Exit status 0 when the conversation went as described, 1 otherwise.
"""

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


def garbage(host, port):
    s = socket.create_connection((host, port), timeout=5)
    s.sendall(b"GET / HTTP/1.1\r\nHost: proofline\r\n\r\n")
    s.sendall(bytes((0xFF - i) % 256 for i in range(4096)))
    try:
        while s.recv(65536):
            pass
    except (socket.timeout, ConnectionResetError):
        pass
    s.close()
    print("garbage sent")
    return 0


def oversize(host, port, size, hold, pid):
    s = socket.create_connection((host, port), timeout=5)
    first = s.recv(32)
    if len(first) < 1 or first[0] != 0x00:
        print(f"no BASP server handshake: {first!r}")
        return 1
    header = struct.pack(BASP_HEADER, CLIENT_HANDSHAKE, 0, 0, 0, size, BASP_VERSION, 0, 0)
    s.sendall(header)
    peak = -1
    end = time.time() + hold
    while time.time() < end:
        if pid:
            peak = max(peak, rss_mib(pid))
        time.sleep(0.1)
    s.close()
    print(f"announced {size} bytes; server RSS peaked at {peak} MiB while connected")
    return 0


def main(argv):
    if len(argv) >= 4 and argv[1] == "garbage":
        return garbage(argv[2], int(argv[3]))
    if len(argv) >= 6 and argv[1] == "oversize":
        pid = int(argv[6]) if len(argv) > 6 else 0
        return oversize(argv[2], int(argv[3]), int(argv[4]), float(argv[5]), pid)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
