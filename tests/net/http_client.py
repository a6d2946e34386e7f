#!/usr/bin/env python3
"""A client of proofline's HTTP API (docs/API.md) on Python's standard
library alone, and the checks tests/net/http_api.sh runs with it.

    http_client.py URL TLS_DIR TOKEN COMMAND ARGS...

TLS_DIR holds ca.pem, peer.pem and peer.key (the daemon's credentials);
"-" for a plain-text door. TOKEN is a bearer token, "-" for none.
Commands print one line and exit 0 when the check holds, 1 otherwise.
"""
import concurrent.futures
import http.client
import json
import os
import ssl
import sys
import time
import urllib.parse


class Client:
    """One HTTP connection per request (the server closes after each)."""

    def __init__(self, url, tls_dir=None, token=None, cert=True):
        u = urllib.parse.urlsplit(url)
        self.host, self.port, self.https = u.hostname, u.port, u.scheme == "https"
        self.token = token
        self.ctx = None
        if self.https:
            self.ctx = ssl.create_default_context(cafile=os.path.join(tls_dir, "ca.pem"))
            # The daemon's certificates name the installation, not a host:
            # the chain to its CA is what is checked (as on the CAF port).
            self.ctx.check_hostname = False
            if cert:
                self.ctx.load_cert_chain(os.path.join(tls_dir, "peer.pem"),
                                         os.path.join(tls_dir, "peer.key"))
        self.seen = set()  # (method, route, status) answered

    def request(self, method, path, body=None, headers=None, route=None):
        h = dict(headers or {})
        if self.token:
            h["Authorization"] = "Bearer " + self.token
        if self.https:
            c = http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=60)
        else:
            c = http.client.HTTPConnection(self.host, self.port, timeout=60)
        try:
            c.request(method, path, body=body, headers=h)
            r = c.getresponse()
            data = r.read()
            self.seen.add((method, route or urllib.parse.urlsplit(path).path, r.status))
            return r.status, dict(r.getheaders()), data
        finally:
            c.close()

    def prove(self, key, wtns_bytes, priority=None):
        q = {"key": key}
        if priority:
            q["priority"] = priority
        return self.request("POST", "/v1/prove?" + urllib.parse.urlencode(q), wtns_bytes,
                            {"Content-Type": "application/octet-stream"})


def error_code(data):
    try:
        return json.loads(data)["error"]["code"]
    except Exception:
        return None


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def expect(client, want, code, method, path, body=None, contains=None, route=None):
    status, headers, data = client.request(method, path, body, route=route)
    if status != want or (code and error_code(data) != code):
        fail(f"{method} {path}: {status} {data[:300]!r}, expected {want} {code}")
    if contains and contains not in data.decode(errors="replace"):
        fail(f"{method} {path}: {data[:300]!r} does not name {contains!r}")
    if want in (429, 503) and "Retry-After" not in headers:
        fail(f"{method} {path}: {want} without Retry-After")
    return headers, data


def check_against_openapi(client, seen):
    status, _, data = client.request("GET", "/v1/openapi.json")
    if status != 200:
        fail(f"/v1/openapi.json: {status}")
    doc = json.loads(data)
    missing = []
    for method, route, st in sorted(seen):
        if route == "/unknown":
            op = None
            for p in doc["paths"].values():
                for o in p.values():
                    if str(st) in o.get("responses", {}):
                        op = o
            if op is None:
                missing.append(f"{method} {route} {st}")
            continue
        m = "get" if method == "HEAD" else method.lower()
        op = doc["paths"].get(route, {}).get(m)
        if op is None and st == 405:
            continue  # a method the route does not have: 405 is documented on its others
        if op is None or str(st) not in op.get("responses", {}):
            missing.append(f"{method} {route} {st}")
    if missing:
        fail("answers not in docs/openapi.json: " + ", ".join(missing))
    return len(seen)


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def main():
    url, tls_dir, token, cmd, *args = sys.argv[1:]
    tls_dir = None if tls_dir == "-" else tls_dir
    token = None if token == "-" else token
    c = Client(url, tls_dir, token)

    if cmd == "prove":  # KEY WTNS OUT_DIR: proof.json and public.json from the answer
        key, wtns, out = args
        status, headers, data = c.prove(key, open(wtns, "rb").read())
        if status != 200:
            fail(f"prove: {status} {data[:300]!r}")
        answer = json.loads(data)
        os.makedirs(out, exist_ok=True)
        json.dump(answer["proof"], open(os.path.join(out, "proof.json"), "w"), indent=1)
        json.dump(answer["public_signals"], open(os.path.join(out, "public.json"), "w"), indent=1)
        print(f"proved: job {headers.get('X-Proofline-Job')}")
    elif cmd == "refusals":  # SMALL_DIR MEDIUM_DIR OUTSIDE_FILE MAX_BODY_BYTES
        small, medium, outside, max_body = args
        key = os.path.join(small, "circuit.zkey")
        w0 = open(os.path.join(small, "witness_0.wtns"), "rb").read()
        anon = Client(url, tls_dir, None)
        expect(anon, 401, "unauthorized", "GET", "/v1/status")
        expect(anon, 401, "unauthorized", "POST", "/v1/prove?key=" + key, w0, route="/v1/prove")
        wrong = Client(url, tls_dir, "not-the-token-at-all-0000")
        expect(wrong, 401, "unauthorized", "GET", "/v1/status")
        if tls_dir:
            nocert = Client(url, tls_dir, token, cert=False)
            try:
                nocert.request("GET", "/v1/status")
                fail("a client without a certificate was answered")
            except (ssl.SSLError, ConnectionError, OSError):
                pass
        q = urllib.parse.quote
        expect(c, 400, "bad_request", "POST", "/v1/prove", w0, contains="key")
        expect(c, 400, "bad_request", "POST", f"/v1/prove?key={q(key)}&priority=urgent", w0,
               contains="priority", route="/v1/prove")
        expect(c, 400, "bad_request", "POST", f"/v1/prove?key={q(key)}", b"",
               contains="request body", route="/v1/prove")
        expect(c, 400, "bad_request", "POST", f"/v1/prove?key={q(key)}",
               open(key, "rb").read()[:4096], contains="request body", route="/v1/prove")
        expect(c, 403, "forbidden", "POST", f"/v1/prove?key={q(outside)}", w0,
               contains="--allow-root", route="/v1/prove")
        expect(c, 404, "not_found", "POST", "/v1/prove?key=k0000000000000000", w0,
               route="/v1/prove")
        expect(c, 404, "not_found", "POST", f"/v1/prove?key={q(small)}/nothing.zkey", w0,
               route="/v1/prove")
        expect(c, 404, "not_found", "GET", "/v1/nothing", route="/unknown")
        expect(c, 405, "method_not_allowed", "GET", "/v1/prove")
        expect(c, 405, "method_not_allowed", "POST", "/v1/status")
        expect(c, 413, "too_large", "POST", f"/v1/prove?key={q(key)}",
               b"\0" * (int(max_body) + 1), route="/v1/prove")
        mw = open(os.path.join(medium, "witness_0.wtns"), "rb").read()
        expect(c, 422, "witness_mismatch", "POST", f"/v1/prove?key={q(key)}", mw,
               contains="witness values", route="/v1/prove")
        status, _, data = c.prove(key, w0)
        if status != 200:
            fail(f"prove after refusals: {status} {data[:200]!r}")
        expect(c, 200, None, "GET", "/v1/status")
        expect(c, 200, None, "GET", "/healthz")
        n = check_against_openapi(c, c.seen | anon.seen | wrong.seen)
        print(f"refusals: ok; {n} route/status pairs answered, all in the OpenAPI document")
    elif cmd == "burst":  # KEY WTNS N: N at once; each 200 or 429 with Retry-After, some 429
        key, wtns, n = args[0], open(args[1], "rb").read(), int(args[2])
        with concurrent.futures.ThreadPoolExecutor(n) as pool:
            answers = list(pool.map(lambda _: c.prove(key, wtns), range(n)))
        counts = {}
        for status, headers, data in answers:
            counts[status] = counts.get(status, 0) + 1
            if status == 429 and ("Retry-After" not in headers or
                                  error_code(data) != "too_many_pending"):
                fail(f"a 429 without Retry-After or its code: {headers} {data!r}")
        if set(counts) - {200, 429} or not counts.get(429) or not counts.get(200):
            fail(f"burst of {n}: {counts}; expected both 200 and 429 only")
        status, _, data = c.request("GET", "/v1/status")
        if json.loads(data)["http"]["pending"] != 0:
            fail(f"after the burst: {data!r}")
        print(f"burst: {counts}")
    elif cmd == "rss":  # PID KEY WTNS N: N requests, RSS after the first 50 and at the end
        pid, key, wtns, n = int(args[0]), args[1], open(args[2], "rb").read(), int(args[3])
        before = None
        for i in range(n):
            if i == 50:
                before = rss_kib(pid)
            if i % 5 == 0:
                status, _, _ = c.prove(key, wtns)
            elif i % 5 == 1:
                status, _, _ = c.request("POST", "/v1/prove", wtns)  # 400
            else:
                status, _, _ = c.request("GET", "/v1/status")
            if status not in (200, 400):
                fail(f"request {i}: {status}")
        after = rss_kib(pid)
        print(f"rss: before_kib={before} after_kib={after} requests={n}")
        if after > before + 16 * 1024:
            fail(f"resident memory grew from {before} to {after} KiB over {n} requests")
    elif cmd == "drain":  # PID KEY WTNS OUT: SIGTERM with a proof running; a new one gets 503
        pid, key, wtns, out = int(args[0]), args[1], open(args[2], "rb").read(), args[3]
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            running = pool.submit(c.prove, key, wtns)
            deadline = time.time() + 20
            while time.time() < deadline:
                _, _, data = c.request("GET", "/v1/status")
                if json.loads(data)["queue"]["jobs_running"] >= 1:
                    break
            else:
                fail("the proof never started")
            os.kill(pid, 15)
            time.sleep(0.01)
            expect(c, 503, "draining", "POST", "/v1/prove?key=" + urllib.parse.quote(key),
                   wtns, route="/v1/prove")
            status, _, data = running.result()
        if status != 200:
            fail(f"the proof running at SIGTERM: {status} {data[:300]!r}")
        answer = json.loads(data)
        os.makedirs(out, exist_ok=True)
        json.dump(answer["proof"], open(os.path.join(out, "proof.json"), "w"))
        json.dump(answer["public_signals"], open(os.path.join(out, "public.json"), "w"))
        print("drain: the running proof finished; a new one was answered 503 with Retry-After")
    else:
        fail("unknown command " + cmd)


if __name__ == "__main__":
    try:
        main()
    except (OSError, ssl.SSLError, http.client.HTTPException, ValueError) as e:
        fail(f"{' '.join(sys.argv[4:5])}: {type(e).__name__}: {e}")
