#!/usr/bin/env python3
"""A client of proofline's HTTP API (docs/API.md) on Python's standard
library alone, and the checks tests/net/http_api.sh runs with it.

    http_client.py URL TLS_DIR TOKEN COMMAND ARGS...

TLS_DIR holds ca.pem, peer.pem and peer.key (the daemon's credentials);
"-" for a plain-text door. TOKEN is a bearer token, "-" for none.
Commands print one line and exit 0 when the check holds, 1 otherwise.
"""
import base64
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


    def job(self, key, uploads=None, paths=None, **fields):
        """POST /v1/jobs with uploaded witnesses (bytes) or witness paths."""
        body = {"key": key, **fields}
        if uploads is not None:
            body["witnesses_base64"] = [base64.b64encode(w).decode() for w in uploads]
        if paths is not None:
            body["witnesses"] = paths
        return self.request("POST", "/v1/jobs", json.dumps(body).encode(),
                            {"Content-Type": "application/json"})

    def job_form(self, key, uploads, **fields):
        """POST /v1/jobs as multipart/form-data: text fields, one witness file part each."""
        boundary = "pl-" + os.urandom(12).hex()
        out = b""
        for name, value in [("key", key), *fields.items()]:
            out += (f"--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n"
                    f"{value}\r\n").encode()
        for i, w in enumerate(uploads):
            out += (f"--{boundary}\r\nContent-Disposition: form-data; name=\"witness\"; "
                    f"filename=\"{i}.wtns\"\r\nContent-Type: application/octet-stream\r\n\r\n").encode()
            out += w + b"\r\n"
        out += f"--{boundary}--\r\n".encode()
        return self.request("POST", "/v1/jobs", out,
                            {"Content-Type": f"multipart/form-data; boundary={boundary}"})

    def events(self, job_id):
        """GET /v1/jobs/ID/events: (status, [(event, data)]) once the stream ends."""
        status, headers, data = self.request("GET", f"/v1/jobs/{job_id}/events",
                                             route="/v1/jobs/{id}/events")
        if status != 200:
            return status, data
        if not headers.get("Content-Type", "").startswith("text/event-stream"):
            fail(f"events: Content-Type {headers.get('Content-Type')}")
        out = []
        for block in data.decode().split("\n\n"):
            lines = [l for l in block.split("\n") if l and not l.startswith(":")]
            if not lines:
                continue
            event = next(l[7:] for l in lines if l.startswith("event: "))
            payload = "".join(l[6:] for l in lines if l.startswith("data: "))
            out.append((event, json.loads(payload)))
        return status, out

    def wait_job(self, job_id, limit_s=60):
        """Polls GET /v1/jobs/ID until it is complete; its JSON."""
        deadline = time.time() + limit_s
        while time.time() < deadline:
            status, _, data = self.request("GET", f"/v1/jobs/{job_id}", route="/v1/jobs/{id}")
            if status != 200:
                fail(f"GET /v1/jobs/{job_id}: {status} {data[:300]!r}")
            j = json.loads(data)
            if j["complete"]:
                return j
            time.sleep(0.1)
        fail(f"job {job_id} did not complete within {limit_s} s")

    def save_proof(self, job_id, index, out):
        """GET /v1/jobs/ID/proofs/I into OUT/proof_I.json and OUT/public_I.json."""
        status, _, data = self.request("GET", f"/v1/jobs/{job_id}/proofs/{index}",
                                       route="/v1/jobs/{id}/proofs/{index}")
        if status != 200:
            fail(f"proof {index} of {job_id}: {status} {data[:300]!r}")
        answer = json.loads(data)
        os.makedirs(out, exist_ok=True)
        json.dump(answer["proof"], open(os.path.join(out, f"proof_{index}.json"), "w"))
        json.dump(answer["public_signals"], open(os.path.join(out, f"public_{index}.json"), "w"))


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


# The keys of an OpenAPI path item that are operations (beside "parameters", ...).
HTTP_METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}


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
                for m, o in p.items():
                    if m in HTTP_METHODS and str(st) in o.get("responses", {}):
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
    elif cmd == "rss":  # PID KEY WTNS N [JOB]: N requests, RSS after the first 50 and at the end
        pid, key, wtns, n = int(args[0]), args[1], open(args[2], "rb").read(), int(args[3])
        job_id = args[4] if len(args) > 4 else None  # a finished job: its view and events too
        before = None
        for i in range(n):
            if i == 50:
                before = rss_kib(pid)
            if i % 5 == 0:
                status, _, _ = c.prove(key, wtns)
            elif i % 5 == 1:
                status, _, _ = c.request("POST", "/v1/prove", wtns)  # 400
            elif i % 5 == 3 and job_id:
                status, _, _ = c.request("GET", f"/v1/jobs/{job_id}", route="/v1/jobs/{id}")
            elif i % 5 == 4 and job_id:
                status, _ = c.events(job_id)  # a streamed answer, ended at once
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
    elif cmd == "jobs":  # SMALL_DIR MEDIUM_DIR OUTSIDE_FILE OUT_DIR (a server with --max-pending 2)
        small, medium, outside, out = args
        key = os.path.join(small, "circuit.zkey")
        w = [open(os.path.join(small, f"witness_{i}.wtns"), "rb").read() for i in range(3)]
        mkey = os.path.join(medium, "circuit.zkey")
        mw = [open(os.path.join(medium, f"witness_{i}.wtns"), "rb").read() for i in range(2)]
        J = "/v1/jobs/{id}"

        def accepted(answer, job_id, n):
            status, headers, data = answer
            if status != 202:
                fail(f"POST /v1/jobs {job_id}: {status} {data[:300]!r}")
            a = json.loads(data)
            if a != {"id": job_id, "url": "/v1/jobs/" + job_id, "partitions": n} or \
                    headers.get("Location") != "/v1/jobs/" + job_id:
                fail(f"POST /v1/jobs {job_id}: {a} {headers}")

        # Uploaded witnesses: 202, a duplicate id 409, then done, proofs, events.
        accepted(c.job(key, uploads=w[:2], id="up", priority="high"), "up", 2)
        j = c.wait_job("up")
        status, _, data = c.job(key, uploads=w[:1], id="up")
        if status != 409 or error_code(data) != "conflict" or b"field id" not in data:
            fail(f"a duplicate id: {status} {data!r}")
        if j["status"] != "done" or j["counts"] != {"total": 2, "done": 2, "failed": 0} or \
                [p["status"] for p in j["partitions"]] != ["done", "done"] or \
                not all(p["verified"] and "prove" in p["spans_ms"] for p in j["partitions"]):
            fail(f"job up: {j}")
        for i in range(2):
            c.save_proof("up", i, os.path.join(out, "up"))
        expect(c, 404, "not_found", "GET", "/v1/jobs/up/proofs/2", contains="2 partition",
               route="/v1/jobs/{id}/proofs/{index}")
        expect(c, 400, "bad_request", "GET", "/v1/jobs/up/proofs/x", contains="proof index",
               route="/v1/jobs/{id}/proofs/{index}")
        status, ev = c.events("up")
        if status != 200 or [e for e, _ in ev] != ["partition", "partition", "end"] or \
                sorted(d["index"] for e, d in ev[:2]) != [0, 1] or ev[2][1]["status"] != "done":
            fail(f"events of a finished job: {status} {ev}")
        expect(c, 409, "conflict", "DELETE", "/v1/jobs/up", contains="done", route=J)

        # Witness paths under --allow-root; events followed live, as they come.
        accepted(c.job(key, paths=[os.path.join(small, "witness_2.wtns")], id="paths"), "paths", 1)
        status, ev = c.events("paths")
        if status != 200 or [e for e, _ in ev] != ["partition", "end"] or \
                ev[0][1]["status"] != "done" or ev[1][1]["counts"]["done"] != 1:
            fail(f"events of a live job: {status} {ev}")
        c.save_proof("paths", 0, os.path.join(out, "paths"))

        # Backpressure and cancel: a job of 2 slow partitions fills --max-pending 2.
        accepted(c.job(mkey, uploads=mw, id="slow"), "slow", 2)
        expect(c, 429, "too_many_pending", "POST", "/v1/jobs",
               json.dumps({"key": key, "witnesses": [os.path.join(small, "witness_0.wtns")]}))
        status, _, data = c.request("DELETE", "/v1/jobs/slow", route=J)
        if status != 200 or json.loads(data)["status"] != "cancelled":
            fail(f"DELETE /v1/jobs/slow: {status} {data!r}")
        j = c.wait_job("slow")
        if j["status"] != "cancelled":
            fail(f"the cancelled job: {j}")
        expect(c, 409, "conflict", "DELETE", "/v1/jobs/slow", contains="cancelled", route=J)

        # Refusals, each naming the field or file.
        def post(body, want, code, contains):
            expect(c, want, code, "POST", "/v1/jobs",
                   body if isinstance(body, bytes) else json.dumps(body).encode(), contains=contains)
        b64 = base64.b64encode(w[0]).decode()
        post(b"{not json", 400, "bad_request", "request body")
        post([1], 400, "bad_request", "request body")
        post({"witnesses_base64": [b64]}, 400, "bad_request", "field key")
        post({"key": key, "witnesses_base64": ["@@"]}, 400, "bad_request", "witnesses_base64[0]")
        post({"key": key, "witnesses_base64": [b64, base64.b64encode(b"not a wtns").decode()]},
             400, "bad_request", "witnesses_base64[1]")
        post({"key": key}, 400, "bad_request", "witnesses")
        post({"key": key, "witnesses_base64": [b64], "witnesses": ["/x"]}, 400, "bad_request",
             "exactly one")
        post({"key": key, "witnesses_base64": [b64] * 3}, 400, "bad_request", "--max-pending")
        post({"key": key, "witnesses_base64": [b64], "prio": "high"}, 400, "bad_request",
             "field prio")
        post({"key": key, "witnesses_base64": [b64], "priority": "urgent"}, 400, "bad_request",
             "field priority")
        post({"key": key, "witnesses_base64": [b64], "id": "../x"}, 400, "bad_request", "field id")
        post({"key": key, "witnesses": ["relative.wtns"]}, 400, "bad_request", "witnesses[0]")
        post({"key": key, "witnesses": [outside]}, 403, "forbidden", "--allow-root")
        post({"key": outside, "witnesses_base64": [b64]}, 403, "forbidden", "--allow-root")
        post({"key": key, "witnesses": [os.path.join(small, "none.wtns")]}, 404, "not_found",
             "witnesses[0]")
        expect(c, 404, "not_found", "GET", "/v1/jobs/nothing", contains="nothing", route=J)
        expect(c, 404, "not_found", "DELETE", "/v1/jobs/nothing", route=J)
        expect(c, 404, "not_found", "GET", "/v1/jobs/nothing/proofs/0",
               route="/v1/jobs/{id}/proofs/{index}")
        status, data = c.events("nothing")
        if status != 404 or error_code(data) != "not_found":
            fail(f"events of an unknown job: {status} {data!r}")
        expect(c, 405, "method_not_allowed", "GET", "/v1/jobs")
        expect(c, 405, "method_not_allowed", "PUT", "/v1/jobs/up", route=J)
        anon = Client(url, tls_dir, None)
        expect(anon, 401, "unauthorized", "POST", "/v1/jobs", b"{}")
        expect(anon, 401, "unauthorized", "GET", "/v1/jobs/up", route=J)
        status, data = anon.events("up")
        if status != 401:
            fail(f"events without a token: {status}")
        n = check_against_openapi(c, c.seen | anon.seen)
        print(f"jobs: ok; {n} route/status pairs answered, all in the OpenAPI document")
    elif cmd == "keys":  # SMALL_DIR OUTSIDE_FILE
        small, outside = args
        key = os.path.join(small, "circuit.zkey")
        K = "/v1/keys/{id}"
        _, data = expect(c, 200, None, "POST", "/v1/keys", json.dumps({"path": key}).encode())
        k = json.loads(data)
        if k["path"] != os.path.realpath(key) or not k["id"].startswith("k") or k["bytes"] <= 0:
            fail(f"POST /v1/keys: {k}")
        _, data = expect(c, 200, None, "GET", "/v1/keys")
        listed = {x["id"]: x for x in json.loads(data)["keys"]}
        if k["id"] not in listed:
            fail(f"GET /v1/keys does not list {k['id']}: {listed}")
        # The id names the key for POST /v1/prove too.
        w0 = open(os.path.join(small, "witness_0.wtns"), "rb").read()
        status, _, data = c.prove(k["id"], w0)
        if status != 200:
            fail(f"prove with key id {k['id']}: {status} {data[:200]!r}")
        _, data = expect(c, 200, None, "DELETE", "/v1/keys/" + k["id"], route=K)
        if json.loads(data)["bytes_freed"] != k["bytes"]:
            fail(f"DELETE /v1/keys: {data!r}")
        _, data = expect(c, 200, None, "GET", "/v1/keys")
        if k["id"] in {x["id"] for x in json.loads(data)["keys"]}:
            fail(f"the evicted key is still listed: {data!r}")
        expect(c, 404, "not_found", "DELETE", "/v1/keys/" + k["id"], contains="not loaded",
               route=K)
        expect(c, 404, "not_found", "DELETE", "/v1/keys/k0000000000000000", route=K)
        expect(c, 403, "forbidden", "POST", "/v1/keys", json.dumps({"path": outside}).encode(),
               contains="--allow-root")
        expect(c, 400, "bad_request", "POST", "/v1/keys", b"{}", contains="field path")
        expect(c, 400, "bad_request", "POST", "/v1/keys", json.dumps({"file": key}).encode(),
               contains="field file")
        expect(c, 404, "not_found", "POST", "/v1/keys",
               json.dumps({"path": os.path.join(small, "none.zkey")}).encode(), contains="none.zkey")
        bad = os.path.join(small, "witness_1.wtns")  # under the root, not a key
        expect(c, 400, "bad_request", "POST", "/v1/keys", json.dumps({"path": bad}).encode(),
               contains="witness_1.wtns")
        expect(c, 405, "method_not_allowed", "GET", "/v1/keys/" + k["id"], route=K)
        n = check_against_openapi(c, c.seen)
        print(f"keys: ok; {n} route/status pairs answered, all in the OpenAPI document")
    elif cmd == "submit":  # KEY ID WTNS...: POST /v1/jobs with these uploads; prints the id
        key, job_id, *wtns = args
        status, _, data = c.job(key, uploads=[open(p, "rb").read() for p in wtns], id=job_id)
        if status != 202:
            fail(f"submit: {status} {data[:300]!r}")
        print(json.loads(data)["id"])
    elif cmd == "finish":  # ID N OUT: waits for the job, saves its N proofs under OUT
        job_id, n, out = args[0], int(args[1]), args[2]
        j = c.wait_job(job_id, 120)
        if j["status"] != "done" or j["counts"]["done"] != n:
            fail(f"job {job_id}: {j}")
        for i in range(n):
            c.save_proof(job_id, i, out)
        print(f"finish: job {job_id} done, {n} proofs")
    elif cmd == "form":  # KEY ID OUT WTNS...: a job sent as a form, its proofs saved under OUT
        key, job_id, out, *wtns = args
        status, _, data = c.job_form(key, [open(p, "rb").read() for p in wtns], id=job_id,
                                     priority="high")
        if status != 202:
            fail(f"form: {status} {data[:300]!r}")
        j = c.wait_job(job_id, 120)
        if j["status"] != "done" or j["counts"]["done"] != len(wtns):
            fail(f"form: job {job_id}: {j}")
        for i in range(len(wtns)):
            c.save_proof(job_id, i, out)
        for uploads, names in (([], b"form field witness: missing"), ([b"not a witness"], b"witness[0]")):
            status, _, data = c.job_form(key, uploads)
            if status != 400 or names not in data:
                fail(f"form of {len(uploads)} bad witness(es): {status} {data[:300]!r}")
        print(f"form: job {job_id} done, {len(wtns)} proofs; a bad witness is 400 naming it")
    elif cmd == "retention":  # KEY WTNS JOBS_DIR: a server with --http-keep-jobs 1
        key, wtns, jobs_dir = args
        w = open(wtns, "rb").read()
        for job_id in ("older", "newer"):
            status, _, data = c.job(key, uploads=[w], id=job_id)
            if status != 202:
                fail(f"retention: {job_id}: {status} {data[:300]!r}")
            c.wait_job(job_id, 60)
        deadline = time.time() + 10
        while os.path.isdir(os.path.join(jobs_dir, "older")) and time.time() < deadline:
            time.sleep(0.1)
        if os.path.isdir(os.path.join(jobs_dir, "older")):
            fail("retention: the older job's outputs are still there")
        if not os.path.isfile(os.path.join(jobs_dir, "newer", "result.json")):
            fail("retention: the newer job's outputs are gone")
        expect(c, 404, "not_found", "GET", "/v1/jobs/older", route="/v1/jobs/{id}")
        status, _, data = c.job(key, uploads=[w], id="older")
        if status != 202:
            fail(f"retention: the freed id is refused: {status} {data[:300]!r}")
        c.wait_job("older", 60)
        print("retention: the oldest finished job's outputs went, its id is free again")
    else:
        fail("unknown command " + cmd)


if __name__ == "__main__":
    try:
        main()
    except (OSError, ssl.SSLError, http.client.HTTPException, ValueError) as e:
        fail(f"{' '.join(sys.argv[4:5])}: {type(e).__name__}: {e}")
