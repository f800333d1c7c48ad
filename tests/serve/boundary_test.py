"""hearth-serve's HTTP boundary end to end over loopback, on the tiny model:

- rights: a key asking for a class outside its rights (X-Hearth-Class, a
  model alias) gets 403 with an OpenAI-shaped error;
- pages: /, /v1/hearth/status and /metrics refuse a request without a
  valid key; a member's key sees the household's totals and only its own
  requests; a scrape key reads /metrics only; request ids are random;
  errors never name another member;
- credentials as RFC 9110 reads them: scheme case-insensitive, spaces or
  tabs, raw header bytes (no percent-decoding, no cut at a NUL);
- connections: head and body deadlines (408), 411 for a POST without a
  Content-Length and for chunked uploads, keys checked before the body,
  the per-client cap shedding keyless connections first and refusing (503)
  only when every connection serves a member;
- honest status codes: a queue timeout on a non-streamed answer is its 504,
  never an error body under 200; Retry-After is at most 60 s and a longer
  quota wait says x-should-retry: false; what the OpenAI Python SDK does
  with each of these exchanges (its retry rule, replayed on the real
  responses with the standard library).
"""

import http.client
import json
import os
import random
import re
import socket
import sys
import threading
import time

from serve_harness import (ADMIN_KEY, HOUSEHOLD_TOML, KEYS, SCRAPE_KEY, Checks, Server, chat_body,
                           server_binary, wait_for)

# quota_window_s of the harness household (serve_harness.HOUSEHOLD_TOML).
QUOTA_WINDOW_S = 3600

checks = Checks("serve/boundary")
check = checks.check


def is_error(resp, status, code=None):
    st, _, body = resp
    ok = st == status and isinstance(body, dict) and isinstance(body.get("error"), dict) and \
        isinstance(body["error"].get("message"), str) and "type" in body["error"]
    return ok and (code is None or body["error"].get("code") == code)


def raw_exchange(port, data, source="127.0.0.1", wait=5.0):
    """Sends `data` on a new connection from `source`; returns (seconds to
    the answer's end or the close, the bytes received)."""
    c = socket.create_connection(("127.0.0.1", port), timeout=wait, source_address=(source, 0))
    start = time.monotonic()
    c.sendall(data)
    out = b""
    try:
        while True:
            d = c.recv(65536)
            if not d:
                break
            out += d
    except OSError:
        pass
    c.close()
    return time.monotonic() - start, out


def status_of(raw):
    m = re.match(rb"HTTP/1\.1 (\d+)", raw)
    return int(m.group(1)) if m else None


def rights(s):
    url = "/v1/chat/completions"
    # dan's key defaults to documents: documents and the classes below it.
    for how, extra in (("X-Hearth-Class: voice", dict(headers={"X-Hearth-Class": "voice"})),
                       ("X-Hearth-Class: chat", dict(headers={"X-Hearth-Class": "chat"})),
                       ("the voice model alias", dict(model="tiny-voice"))):
        body = chat_body(max_tokens=2, model=extra.get("model", "tiny"))
        resp = s.request("POST", url, body, key=KEYS["dan"], headers=extra.get("headers"))
        check(is_error(resp, 403, "permission_denied") and "documents" in resp[2]["error"]["message"],
              "dan's key asking for a higher class by %s is 403 naming what it may use" % how)
    for cls in ("documents", "maintenance"):
        st, _, _ = s.request("POST", url, chat_body(max_tokens=2), key=KEYS["dan"],
                             headers={"X-Hearth-Class": cls})
        check(st == 200, "dan's key may use %s" % cls)
    st, _, _ = s.request("POST", url, chat_body(max_tokens=2, model="tiny-voice"), key=KEYS["ben"])
    check(st == 200, "ben's voice key may use the voice alias")
    resp = s.request("POST", "/v1/hearth/documents", {"text": "a b c", "max_tokens": 2},
                     key=KEYS["dan"], headers={"X-Hearth-Class": "voice"})
    check(is_error(resp, 403, "permission_denied"), "a document asking for voice with dan's key is 403")
    check(is_error(s.request("POST", url, chat_body(), key=SCRAPE_KEY), 403),
          "a scrape key makes no calls (403)")


def pages(s):
    for path in ("/", "/v1/hearth/status", "/metrics"):
        for key in (None, "sk-nobody"):
            st, h, body = s.request("GET", path, key=key)
            check(st == 401 and "www-authenticate" in h and isinstance(body, dict) and "error" in body,
                  "%s with %s is 401 with a challenge" % (path, "no key" if key is None else "a bad key"))
    st, h, _ = s.request("GET", "/")
    check("Basic" in h.get("www-authenticate", ""), "the dashboard's 401 offers Basic, for browsers")
    check(s.request("GET", "/metrics", key=SCRAPE_KEY)[0] == 200, "the scrape key reads /metrics")
    for path in ("/", "/v1/hearth/status"):
        check(is_error(s.request("GET", path, key=SCRAPE_KEY), 403), "the scrape key may not read %s" % path)
    check(s.request("GET", "/healthz")[0] == 200, "/healthz needs no key")

    # ben holds a long request while ana looks at the pages.
    holder = {}
    stop = threading.Event()
    t = threading.Thread(target=lambda: holder.update(r=s.stream(
        "/v1/chat/completions", chat_body(max_tokens=3000), key=KEYS["ben"],
        on_event=lambda e, c: not stop.is_set())))
    t.start()
    admin = wait_for(lambda: (lambda st: st if any(r["member"] == "ben" for r in st["running"]) else None)(
        s.status()), timeout=15)
    ana = s.status(key=KEYS["ana"])
    check(admin is not None and {m["name"] for m in admin["members"]} == {"ana", "ben", "cleo", "dan", "eve"},
          "the admin sees every member and ben's running request")
    check([m["name"] for m in ana["members"]] == ["ana"] and ana["running"] == [] and
          ana["viewer"] == {"role": "member", "member": "ana"} and "ben" not in json.dumps(ana),
          "ana's status shows only her own entry and none of ben's requests")
    check(len(ana["classes"]) == len(admin["classes"]) and ana["kv"]["usable_blocks"] > 0,
          "ana's status keeps the household's totals (classes, KV)")
    ben = s.status(key=KEYS["ben"])
    ben_ids = [r["id"] for r in admin["running"] if r["member"] == "ben"]
    check([r["id"] for r in ben["running"]] == ben_ids and len(ben_ids) == 1 and
          re.fullmatch(r"[0-9a-f]{24}", ben_ids[0]) is not None,
          "ben sees his own running request, by the random id the admin sees too")
    ana_metrics = s.metrics(key=KEYS["ana"])
    users = set(re.findall(r'^hearth_user_\w+\{user="([^"]*)"', ana_metrics, re.M))
    check(users == {"ana"}, "ana's /metrics has per-user series of hers only (%s)" % sorted(users))
    all_users = set(re.findall(r'^hearth_user_\w+\{user="([^"]*)"', s.metrics(), re.M))
    check("ben" in all_users, "the admin's /metrics has ben's series")
    stop.set()
    t.join()

    # Ids are random: two answers in a row share no visible order.
    ids = [s.request("POST", "/v1/completions", {"model": "tiny", "prompt": "x", "max_tokens": 1},
                     key=KEYS["ana"])[1].get("x-hearth-request-id", "") for _ in range(2)]
    check(all(re.fullmatch(r"[0-9a-f]{24}", i) for i in ids) and ids[0] != ids[1],
          "request ids are 24 random hex digits (%s)" % ids)
    resp = s.request("POST", "/v1/chat/completions", chat_body(max_tokens=2), key=KEYS["ana"],
                     headers={"X-Hearth-Parent": "chatcmpl-" + ben["running"][0]["id"]})
    check(is_error(resp, 400) and "ben" not in resp[2]["error"]["message"],
          "naming ben's request as a parent is 400 without naming ben (%s)" % resp[2]["error"]["message"])


def credentials(s):
    def models(auth=None, api_key=None):
        h = {}
        if auth is not None:
            h["Authorization"] = auth
        if api_key is not None:
            h["X-Api-Key"] = api_key
        return s.request("GET", "/v1/models", headers=h)[0]
    for auth in ("Bearer sk-ana", "BEARER sk-ana", "bearer\tsk-ana", "Bearer   sk-ana",
                 "Basic YW5hOnNrLWFuYQ=="):
        check(models(auth) == 200, "%r authenticates" % auth)
    check(models(api_key="sk-ana") == 200, "X-Api-Key authenticates")
    for auth in ("Bearer sk-ana-lap%74op", "Bearer sk-an%61", "Bearer sk-ana%00garbage", "Bearer sk ana",
                 "Token sk-ana"):
        check(models(auth) == 401, "%r is 401" % auth)
    # A real NUL byte and a second Authorization, sent raw.
    _, out = raw_exchange(s.port, b"GET /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer sk-ana\x00x\r\n\r\n")
    check(status_of(out) == 400, "a NUL byte in a header is 400 (%r)" % out[:40])
    _, out = raw_exchange(s.port, b"GET /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer sk-ana\r\n"
                                  b"Authorization: Bearer sk-ben\r\nConnection: close\r\n\r\n")
    check(status_of(out) == 401, "two Authorization headers are 401")
    # Every header is read raw: an encoded class name is no class.
    resp = s.request("POST", "/v1/chat/completions", chat_body(max_tokens=2), key=KEYS["ben"],
                     headers={"X-Hearth-Class": "vo%69ce"})
    check(is_error(resp, 400), "X-Hearth-Class: vo%69ce is not read as voice")


def connections(binary):
    with Server(binary, "--header_timeout=1s", "--body_timeout=1s", "--max_connections_per_client=6",
                "--n_seq_max=4") as s:
        # A head a byte every 0.2 s: cut at the head deadline with a 408.
        c = socket.create_connection(("127.0.0.1", s.port), timeout=5)
        start = time.monotonic()
        got = b""
        for ch in b"GET /v1/models HTTP/1.1\r\nHost: x\r\n" * 4:
            try:
                c.send(bytes([ch]))
            except OSError:
                break
            c.settimeout(0.2)
            try:
                d = c.recv(4096)
                got += d
                if not d:
                    break
            except socket.timeout:
                pass
        cut = time.monotonic() - start
        c.close()
        check(status_of(got) == 408 and cut < 3, "a head sent a byte at a time is cut at its deadline "
              "with a 408 (%.1f s)" % cut)
        # A body that never comes: 408 at the body deadline.
        took, out = raw_exchange(s.port, b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                                         b"Authorization: Bearer sk-ana\r\nContent-Length: 500\r\n\r\n{")
        check(status_of(out) == 408 and took < 3, "a body that stalls is cut at its deadline (%.1f s)" % took)
        took, out = raw_exchange(s.port, b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                                         b"Authorization: Bearer sk-ana\r\n\r\n")
        check(status_of(out) == 411 and took < 0.9, "a POST without Content-Length is 411 at once (%.2f s)" % took)
        took, out = raw_exchange(s.port, b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                                         b"Authorization: Bearer sk-ana\r\nTransfer-Encoding: chunked\r\n\r\n")
        check(status_of(out) == 411 and b"Content-Length" in out, "a chunked upload is 411")
        for auth in (b"", b"Authorization: Bearer sk-nobody\r\n"):
            took, out = raw_exchange(s.port, b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n" + auth +
                                     b"Content-Length: 1000000\r\n\r\n")
            check(status_of(out) == 401 and took < 0.9,
                  "%s key is 401 before any body byte (%.2f s)" % ("a bad" if auth else "no", took))
        took, out = raw_exchange(s.port, b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                                         b"Authorization: Bearer sk-ana\r\nContent-Length: 99000000\r\n\r\n")
        check(status_of(out) == 413 and took < 0.9, "a body over the limit is 413 before it is read")

        # Per-client cap (6): keyless idle connections from 127.0.0.2.
        idle = [socket.create_connection(("127.0.0.1", s.port), source_address=("127.0.0.2", 0))
                for _ in range(6)]
        time.sleep(0.2)
        late = socket.create_connection(("127.0.0.1", s.port), source_address=("127.0.0.2", 0))
        idle[0].settimeout(1)
        try:
            first_closed = idle[0].recv(10) == b""
        except OSError:
            first_closed = True
        check(first_closed, "at the per-client cap the oldest keyless connection is shed")
        r = http.client.HTTPConnection("127.0.0.1", s.port, timeout=10, source_address=("127.0.0.2", 0))
        r.request("GET", "/v1/models", headers={"Authorization": "Bearer sk-ana"})
        check(r.getresponse().status == 200, "a member from the same full address is still served")
        r.close()
        for c in idle + [late]:
            c.close()
        # Six members' streams from 127.0.0.3 fill its cap: a seventh is refused.
        conns = []
        for _ in range(6):
            c = http.client.HTTPConnection("127.0.0.1", s.port, timeout=30, source_address=("127.0.0.3", 0))
            c.request("POST", "/v1/chat/completions", body=json.dumps(dict(chat_body(max_tokens=3000), stream=True)),
                      headers={"Authorization": "Bearer sk-ana", "Content-Type": "application/json"})
            conns.append(c)
        time.sleep(0.5)
        took, out = raw_exchange(s.port, b"GET /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer sk-ana\r\n\r\n",
                                 source="127.0.0.3")
        check(status_of(out) == 503 and b"Retry-After: 1" in out,
              "with every connection of an address serving a member, a new one is refused 503")
        for c in conns:
            c.close()
        metrics = s.metrics()
        for reason in ("shed", "refused", "head_timeout", "body_timeout"):
            m = re.search(r'hearth_serve_connections_ended_early_total\{reason="%s"\} (\d+)' % reason, metrics)
            check(m is not None and int(m.group(1)) >= 1, "/metrics counts connections ended: %s" % reason)
        check(s.proc.poll() is None, "the server is still up")


SLOW_CLASSES = """
[[class]]
name = "chat"
priority = 3
queue_timeout_s = 3
ttft_slo_s = 2

[[class]]
name = "documents"
priority = 1
"""


def sdk_outcome(status, headers, remaining_retries=2):
    """What the OpenAI Python SDK (openai-python 1.x, BaseClient._should_retry
    and _calculate_retry_timeout) does with a response: ("success",),
    ("raise",) or ("retry", seconds it sleeps first)."""
    if status < 400:
        return ("success",)
    flag = headers.get("x-should-retry")
    if flag == "true":
        retry = True
    elif flag == "false":
        retry = False
    else:
        retry = status in (408, 409, 429) or status >= 500
    if not retry or remaining_retries <= 0:
        return ("raise",)
    wait = None
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        try:
            wait = float(headers[name]) / divisor
            break
        except (KeyError, ValueError):
            pass
    if wait is not None and 0 < wait <= 60:
        return ("retry", wait)
    return ("retry", 0.5 * (1 - 0.25 * random.random()))


def honest_status(binary):
    household = HOUSEHOLD_TOML + SLOW_CLASSES
    household = household.replace('default_class = "voice"', 'default_class = "chat"')
    household = household.replace('default_class = "agent"', 'default_class = "chat"')
    household = household.replace('class = "voice"', 'class = "chat"')
    # The holder must outlast the queue timeout: on streams without flash
    # attention the tiny model decodes 4000 tokens in about a second, so it
    # asks for 30000 in a 32768-token context (the stop event ends it).
    with Server(binary, "--n_seq_max=1", "--interactive_classes=chat", "--n_ctx=32768",
                household=household) as s:
        stop = threading.Event()
        holder = threading.Thread(target=s.stream, args=("/v1/chat/completions", chat_body(max_tokens=30000)),
                                  kwargs=dict(key=KEYS["ben"], on_event=lambda e, c: not stop.is_set()))
        holder.start()
        wait_for(lambda: s.status()["requests"]["running"] == 1)
        # The one sequence is taken: a whole answer waits past its class's
        # 3 s queue timeout (longer than the 2 s after which the server used
        # to commit a 200 and pad).
        start = time.monotonic()
        st, h, body = s.request("POST", "/v1/chat/completions", chat_body(max_tokens=4), key=KEYS["ana"])
        took = time.monotonic() - start
        stop.set()
        holder.join()
        check(is_error((st, h, body), 504) and took >= 2.5,
              "a queue timeout on a non-streamed answer is 504 with its error, after %.1f s (got %d)" % (took, st))
        outcome = sdk_outcome(st, h)
        check(outcome[0] != "success", "the SDK sees the queue timeout as an error (%s)" % (outcome,))

        # dan's quota (5,000 tokens an hour): the wait is the window's rest.
        # Windows are aligned to the Unix epoch, so in a window's last minute
        # the true wait is itself under 60 s and rightly not flagged: start
        # in the next window instead.
        left = QUOTA_WINDOW_S - time.time() % QUOTA_WINDOW_S
        if left < 70:
            time.sleep(left + 1)
        st, h, body = s.request("POST", "/v1/completions", {"model": "tiny", "prompt": "x", "max_tokens": 6000},
                                key=KEYS["dan"])
        retry_after = int(h.get("retry-after", "0"))
        check(st == 429 and 1 <= retry_after <= 60 and h.get("x-should-retry") == "false",
              "a quota 429 says Retry-After %d (<= 60) and x-should-retry: false" % retry_after)
        check(sdk_outcome(st, h) == ("raise",), "the SDK raises the quota 429 at once instead of sleeping")
        # eve's queue limit (one unfinished request): retry in a second.
        stop = threading.Event()
        holder = threading.Thread(target=s.stream, args=("/v1/chat/completions", chat_body(max_tokens=3000)),
                                  kwargs=dict(key=KEYS["eve"], on_event=lambda e, c: not stop.is_set()))
        holder.start()
        wait_for(lambda: any(m["name"] == "eve" and m["running"] + m["waiting"] > 0 for m in s.status()["members"]))
        st, h, body = s.request("POST", "/v1/chat/completions", chat_body(max_tokens=2), key=KEYS["eve"])
        stop.set()
        holder.join()
        check(st == 429 and h.get("retry-after") == "1" and "x-should-retry" not in h,
              "a queue-limit 429 says Retry-After: 1")
        check(sdk_outcome(st, h) == ("retry", 1.0), "the SDK retries the queue-limit 429 after 1 s")


def readme_household(binary):
    """The household file README.md shows parses and means what it says."""
    readme = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "README.md")).read()
    section = readme[readme.index("## Serving a household"):]
    toml = re.search(r"```toml\n(.*?)```", section, re.S).group(1)
    with Server(binary, household=toml) as s:
        check(s.request("POST", "/v1/chat/completions", chat_body(max_tokens=2), key="sk-ben-speaker",
                        headers={"X-Hearth-Class": "agent"})[0] == 403,
              "README's household: ben's allowed_classes leave out agent (403)")
        check(s.request("POST", "/v1/chat/completions", chat_body(max_tokens=2, model="hearth-voice"),
                        key="sk-ben-speaker")[0] == 200, "README's household: ben may use the voice alias")
        check(s.request("POST", "/v1/chat/completions", chat_body(max_tokens=2, model="hearth-voice"),
                        key="sk-ana-laptop")[0] == 403, "README's household: ana's chat key may not use voice")
        check(s.request("GET", "/v1/hearth/status", key="sk-house-admin")[0] == 200 and
              s.request("POST", "/v1/chat/completions", chat_body(), key="sk-house-admin")[0] == 403,
              "README's household: the admin key reads the pages and makes no calls")
        check(s.request("GET", "/metrics", key="sk-prometheus")[0] == 200 and
              s.request("GET", "/", key="sk-prometheus")[0] == 403,
              "README's household: the metrics key reads /metrics only")


def main():
    binary = server_binary()
    with Server(binary) as s:
        for part in (rights, pages, credentials):
            print("--", part.__name__, flush=True)
            try:
                part(s)
            except Exception as e:  # a crash of the test is a failed check, and the log helps
                check(False, "%s raised %r; server log:\n%s" % (part.__name__, e, s.stderr()))
        check(s.proc.poll() is None, "the server is still up")
    for part in (connections, honest_status, readme_household):
        print("--", part.__name__, flush=True)
        try:
            part(binary)
        except Exception as e:
            check(False, "%s raised %r" % (part.__name__, e))
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
