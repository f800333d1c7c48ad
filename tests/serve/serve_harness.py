"""Starts hearth-serve on a free loopback port and talks to it (stdlib only).

Used by the end-to-end tests in this folder. The server runs the tiny
self-written GGUF model (written by hearth-serve itself when no --model is
given) with one llama.cpp thread, so the tests fit a 2-core CI machine.
"""

import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time

HOUSEHOLD_TOML = """
[[member]]
name = "ana"
weight = 2.0

[[member]]
name = "ben"

[[member]]
name = "cleo"

[[member]]
name = "dan"
token_quota = 5000
quota_window_s = 3600

[[member]]
name = "eve"
max_queued_requests = 1

[[key]]
key = "sk-ana"
member = "ana"
default_class = "chat"

[[key]]
key = "sk-ben"
member = "ben"
default_class = "voice"

[[key]]
key = "sk-cleo"
member = "cleo"
default_class = "agent"

[[key]]
key = "sk-dan"
member = "dan"
default_class = "documents"

[[key]]
key = "sk-eve"
member = "eve"

[[key]]
key = "sk-admin"
role = "admin"

[[key]]
key = "sk-scrape"
role = "metrics"

[[alias]]
model = "tiny-voice"
class = "voice"
"""

KEYS = {"ana": "sk-ana", "ben": "sk-ben", "cleo": "sk-cleo", "dan": "sk-dan", "eve": "sk-eve"}
# Keys of no member: the household's admin (sees every page whole) and a
# Prometheus scrape key.
ADMIN_KEY = "sk-admin"
SCRAPE_KEY = "sk-scrape"


class Server:
    """A hearth-serve process; use as a context manager."""

    def __init__(self, binary, *flags, household=HOUSEHOLD_TOML):
        self.binary = binary
        self.flags = list(flags)
        self.household = household
        self.proc = None
        self.port = None
        self.dir = tempfile.TemporaryDirectory(prefix="hearth-serve-test-")

    def __enter__(self):
        args = [self.binary, "--port=0", "--threads=1", "--tiny_no_eos"]
        if self.household is not None:
            path = os.path.join(self.dir.name, "household.toml")
            with open(path, "w") as f:
                f.write(self.household)
            args.append("--household=" + path)
        args += self.flags
        self.log = open(os.path.join(self.dir.name, "server.log"), "w+")
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=self.log, text=True)
        line = self.proc.stdout.readline()
        # The start line: model, policy, context, threads, address.
        self.banner = line
        m = re.search(r"listening on http://[^:]+:(\d+)", line)
        if not m:
            raise RuntimeError("hearth-serve did not start: %r %s" % (line, self.stderr()))
        self.port = int(m.group(1))
        return self

    def __exit__(self, *exc):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        report = self.sanitizer_report()
        self.log.close()
        self.dir.cleanup()
        if report and exc[0] is None:
            # In a sanitizer build a report (a leak at exit included) fails
            # the test, whatever its own checks said.
            raise RuntimeError("hearth-serve's sanitizer report (exit %s):\n%s" %
                               (self.proc.returncode, report))

    def sanitizer_report(self):
        """The server log from the first ASan/LSan/UBSan report on, or ""."""
        self.log.flush()
        self.log.seek(0)
        text = self.log.read()
        starts = [text.find(m) for m in ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer",
                                         "runtime error:") if m in text]
        return text[min(starts):][:8000] if starts else ""

    def stderr(self):
        self.log.flush()
        self.log.seek(0)
        return self.log.read()[-4000:]

    def rss_kib(self, field="VmRSS"):
        with open("/proc/%d/status" % self.proc.pid) as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
        return 0

    def connect(self, timeout=60):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def request(self, method, path, body=None, key=None, headers=None, timeout=60):
        """Returns (status, headers dict, parsed JSON or text)."""
        conn = self.connect(timeout)
        h = dict(headers or {})
        if key:
            h["Authorization"] = "Bearer " + key
        if isinstance(body, (dict, list)):
            body = json.dumps(body)
            h.setdefault("Content-Type", "application/json")
        conn.request(method, path, body=body, headers=h)
        resp = conn.getresponse()
        data = resp.read().decode("utf-8", "replace")
        conn.close()
        try:
            parsed = json.loads(data)
        except ValueError:
            parsed = data
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, parsed

    def status(self, key=ADMIN_KEY):
        return self.request("GET", "/v1/hearth/status", key=key)[2]

    def metrics(self, key=ADMIN_KEY):
        return self.request("GET", "/metrics", key=key)[2]

    def stream(self, path, body, key=None, headers=None, on_event=None, timeout=120):
        """Streams a completion. Returns dict(status, events, text, ttft_s,
        finish_reason, usage, done, error). on_event(event, conn) may return
        False to stop reading (the connection is then closed)."""
        body = dict(body, stream=True)
        conn = self.connect(timeout)
        h = {"Content-Type": "application/json"}
        h.update(headers or {})
        if key:
            h["Authorization"] = "Bearer " + key
        start = time.monotonic()
        conn.request("POST", path, body=json.dumps(body), headers=h)
        resp = conn.getresponse()
        out = dict(status=resp.status, events=[], text="", ttft_s=None, finish_reason=None,
                   usage=None, done=False, error=None,
                   request_id=resp.getheader("X-Hearth-Request-Id"))
        if resp.status != 200:
            out["error"] = json.loads(resp.read() or b"{}")
            conn.close()
            return out
        while True:
            line = resp.readline()
            if not line:
                break
            line = line.decode("utf-8", "replace").rstrip("\n")
            if not line.startswith("data: "):
                continue
            payload = line[len("data: "):]
            if payload == "[DONE]":
                out["done"] = True
                break
            event = json.loads(payload)
            out["events"].append(event)
            if "error" in event:
                out["error"] = event
                continue
            if event.get("usage"):
                out["usage"] = event["usage"]
            for choice in event.get("choices", []):
                piece = choice.get("delta", {}).get("content") if "delta" in choice else choice.get("text")
                if piece:
                    if out["ttft_s"] is None:
                        out["ttft_s"] = time.monotonic() - start
                    out["text"] += piece
                if choice.get("finish_reason"):
                    out["finish_reason"] = choice["finish_reason"]
            if on_event is not None and on_event(event, conn) is False:
                break
        conn.close()
        return out


def raw_answer(port, data, timeout=30):
    """Sends `data` as it is on a new connection; returns every byte the
    server writes until it closes the connection."""
    out = b""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(data)
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                return out
            out += chunk


def start_draining(s):
    """SIGTERMs `s` while one long answer runs, so that it stays draining;
    returns that answer's socket (closing it cancels the answer, and the
    drain then ends at once) once GET /health says 503."""
    # Thousands of tokens: still running when the caller's probes are made.
    body = json.dumps({"model": "tiny", "prompt": "The house", "max_tokens": 4000,
                       "temperature": 0, "stream": True}).encode()
    held = socket.create_connection(("127.0.0.1", s.port), timeout=30)
    held.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer sk-ana\r\n"
                 b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) +
                 body)
    held.recv(1)
    wait_for(lambda: s.status()["live_requests"] == 1)
    s.proc.send_signal(signal.SIGTERM)
    wait_for(lambda: s.request("GET", "/health", timeout=10)[0] == 503, timeout=10)
    return held


def chat_body(content="Hello, hearth.", model="tiny", **extra):
    # Greedy by default: with --tiny_no_eos the answer then never ends early.
    body = {"model": model, "messages": [{"role": "user", "content": content}], "temperature": 0}
    body.update(extra)
    return body


# Prompts for the JSON-mode checks (response_format json_object, Ollama's
# format "json"): each answer is held to one JSON object whatever it asks.
JSON_PROMPTS = ("Hello", "Give me JSON", "{", "data")


def check_json_objects(check, answers, what):
    """`answers`: (status, text, ended) of JSON-mode requests. Each must be
    200 and open an object; each that ended (not cut by its budget) must
    parse as one object; at least one must have ended."""
    ok = 0
    for st, text, ended in answers:
        check(st == 200 and text.startswith("{"), "%s starts an object (%r)" % (what, text[:40]))
        if ended:
            try:
                ok += isinstance(json.loads(text), dict)
            except ValueError:
                check(False, "%s ended with invalid JSON: %r" % (what, text))
    check(ok > 0, "%s yields parseable JSON objects (%d of %d ended)" % (what, ok, len(answers)))


# The JSON-schema checks' schema (response_format json_schema, `json_schema`,
# Ollama's format): an object with a required string and a bounded integer.
# The string is held to ASCII letters: the tiny model's tokens are single
# bytes, and llama.cpp's grammar reads an invalid UTF-8 sequence as one
# character, which the answer's text shows as several U+FFFD.
PET_SCHEMA = {"type": "object",
              "properties": {"name": {"type": "string", "pattern": "^[A-Za-z]{1,12}$"},
                             "age": {"type": "integer", "minimum": 0, "maximum": 30}},
              "required": ["name", "age"], "additionalProperties": False}


def pet_schema_error(text):
    """None when `text` is JSON that PET_SCHEMA accepts, else why not (the
    schema checked by hand: no validator package is installed)."""
    try:
        value = json.loads(text)
    except ValueError:
        return "not JSON: %r" % text[:80]
    if not isinstance(value, dict):
        return "not an object: %r" % value
    # Generated in the schema's order, not the parsed body's sorted one.
    if list(value) != ["name", "age"]:
        return "keys %s, not name then age" % list(value)
    name, age = value["name"], value["age"]
    if not isinstance(name, str) or not re.fullmatch("[A-Za-z]{1,12}", name):
        return "name %r is not 1 to 12 ASCII letters" % name
    if isinstance(age, bool) or not isinstance(age, int) or not 0 <= age <= 30:
        return "age %r is not an integer in [0, 30]" % age
    return None


def wait_for(predicate, timeout=10.0, interval=0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    return predicate()


# Jitter of one request's latency on a loaded 2-core machine: a baseline
# below this is compared as if it were this, so a ratio measures waiting.
LATENCY_JITTER_FLOOR_S = 0.03


def percentile(values, q):
    values = sorted(values)
    if not values:
        return float("nan")
    k = (len(values) - 1) * q
    lo = int(k)
    hi = min(lo + 1, len(values) - 1)
    if k == lo or values[hi] == values[lo]:
        return values[lo]  # also keeps an infinite value from turning into NaN
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


class Checks:
    """Collects failed checks; a test ends with sys.exit(checks.finish())."""

    def __init__(self, name):
        self.name = name
        self.failures = []

    def check(self, cond, what):
        print(("ok   " if cond else "FAIL ") + what, flush=True)
        if not cond:
            self.failures.append(what)
        return cond

    def finish(self):
        if self.failures:
            print("%s: %d check(s) failed" % (self.name, len(self.failures)))
            return 1
        print("%s: all checks passed" % self.name)
        return 0


def server_binary():
    if len(sys.argv) < 2:
        sys.exit("usage: %s <path to hearth-serve> [output dir]" % sys.argv[0])
    return sys.argv[1]
