"""hearth-serve's CORS over loopback, on the tiny GGUF model: with
--cors_origins a listed origin's preflight (OPTIONS, no key) is 204 with the
methods, headers and max age, and every answer to it (errors included)
echoes the origin, never "*"; an unlisted origin gets no CORS header; a
preflight's connection still counts as a stranger's at the connection cap;
"*" and malformed origins are refused at start with keys; without the flag
nothing changes."""

import os
import socket
import subprocess
import sys
import tempfile

from serve_harness import HOUSEHOLD_TOML, KEYS, Checks, Server, chat_body, raw_answer, server_binary

checks = Checks("serve/cors")
check = checks.check

PAGE = "https://chat.home.arpa"
OTHER = "http://127.0.0.1:3000"
CHAT = "/v1/chat/completions"
CORS_NAMES = ("access-control-allow-origin", "access-control-allow-methods",
              "access-control-allow-headers", "access-control-max-age",
              "access-control-expose-headers", "access-control-allow-credentials")


def preflight(s, origin, path=CHAT, extra=None):
    headers = {"Origin": origin, "Access-Control-Request-Method": "POST",
               "Access-Control-Request-Headers": "authorization,content-type,x-hearth-class"}
    headers.update(extra or {})
    return s.request("OPTIONS", path, headers=headers)


def no_cors(h):
    return not any(name in h for name in CORS_NAMES)


def listed(s):
    for origin in (PAGE, OTHER):
        st, h, body = preflight(s, origin)
        allowed = h.get("access-control-allow-headers", "").lower()
        check(st == 204 and body == "" and h.get("access-control-allow-origin") == origin and
              "POST" in h.get("access-control-allow-methods", "") and
              all(n in allowed for n in ("authorization", "content-type", "x-hearth-class",
                                         "x-request-id")) and
              h.get("access-control-max-age") == "600" and h.get("vary") == "Origin" and
              "access-control-allow-credentials" not in h,
              "a preflight from %s needs no key: 204 with the CORS headers" % origin)
    st, h, _ = preflight(s, PAGE, path="/v1/models")
    check(st == 204 and h.get("access-control-allow-origin") == PAGE, "a preflight on any path")
    calls = [("POST", CHAT, chat_body(max_tokens=2), KEYS["ana"], 200),
             ("GET", "/v1/models", None, KEYS["ana"], 200),
             ("GET", "/v1/models", None, None, 401),
             ("POST", CHAT, chat_body(max_tokens=2), "sk-not-a-key", 401),
             ("POST", CHAT, chat_body(grammar="x"), KEYS["ana"], 400),
             ("GET", "/no/such/route", None, KEYS["ana"], 404),
             ("GET", "/health", None, None, 200)]
    for method, path, body, key, status in calls:
        st, h, _ = s.request(method, path, body, key=key, headers={"Origin": PAGE})
        check(st == status and h.get("access-control-allow-origin") == PAGE and
              h.get("vary") == "Origin" and
              "x-request-id" in h.get("access-control-expose-headers", "").lower(),
              "%s %s (%d) from a listed origin echoes it" % (method, path, status))
    streamed = s.stream(CHAT, chat_body(max_tokens=2), key=KEYS["ana"], headers={"Origin": PAGE})
    check(streamed["done"], "a stream from a listed origin is served")


def unlisted(s):
    for origin in ("https://evil.example", "https://chat.home.arpa.evil.example", "null",
                   "HTTPS://CHAT.HOME.ARPA", PAGE + "/", "*"):
        st, h, _ = preflight(s, origin)
        check(st == 204 and no_cors(h) and h.get("vary") == "Origin",
              "a preflight from %r gets no CORS header" % origin)
        st, h, _ = s.request("GET", "/v1/models", key=KEYS["ana"], headers={"Origin": origin})
        check(st == 200 and no_cors(h) and h.get("vary") == "Origin",
              "an answer to %r carries no CORS header" % origin)
    st, h, _ = s.request("GET", "/v1/models", key=KEYS["ana"])
    check(st == 200 and no_cors(h) and h.get("vary") == "Origin", "no Origin: no CORS header")
    # Two Origin headers name no one origin.
    data = raw_answer(s.port, ("OPTIONS /v1/models HTTP/1.1\r\nHost: x\r\nOrigin: %s\r\n"
                               "Origin: %s\r\nConnection: close\r\n\r\n" % (PAGE, PAGE)).encode())
    check(data.startswith(b"HTTP/1.1 204") and b"Access-Control-Allow-Origin" not in data,
          "two Origin headers get no CORS header")


def not_a_way_around(s):
    # An OPTIONS that carries a body is no preflight: it needs a key.
    st, h, _ = s.request("OPTIONS", CHAT, body="hello", headers={"Origin": PAGE})
    check(st == 401, "an OPTIONS with a body needs a key")
    st, _, _ = s.request("OPTIONS", CHAT, body="hello", key=KEYS["ana"], headers={"Origin": PAGE})
    check(st == 204, "with a key it is answered")


def preflight_is_a_stranger(binary):
    # Cap 2 per address: a member's idle keep-alive connection (the older)
    # and a preflight's; a third connection sheds the preflight's, never the
    # member's.
    with Server(binary, "--cors_origins=" + PAGE, "--max_connections_per_client=2") as s:
        member = s.connect()
        member.request("GET", "/v1/models", headers={"Authorization": "Bearer " + KEYS["ana"]})
        resp = member.getresponse()
        resp.read()
        check(resp.status == 200, "the member's keep-alive connection is open")
        pre = socket.create_connection(("127.0.0.1", s.port), timeout=30)
        pre.sendall(("OPTIONS %s HTTP/1.1\r\nHost: x\r\nOrigin: %s\r\n"
                     "Access-Control-Request-Method: POST\r\n\r\n" % (CHAT, PAGE)).encode())
        answer = pre.recv(65536)
        check(answer.startswith(b"HTTP/1.1 204"), "the preflight is answered, its connection kept")
        third = s.connect()
        third.request("GET", "/v1/models", headers={"Authorization": "Bearer " + KEYS["ben"]})
        check(third.getresponse().status == 200, "a third connection at the cap is served")
        third.close()
        pre.settimeout(10)
        try:
            shed = pre.recv(10) == b""
        except OSError:
            shed = True
        check(shed, "the preflight's connection was shed as a stranger's")
        member.request("GET", "/v1/models", headers={"Authorization": "Bearer " + KEYS["ana"]})
        check(member.getresponse().status == 200, "the member's idle connection was kept")
        member.close()
        pre.close()


def refused_at_start(binary):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "household.toml")
        with open(path, "w") as f:
            f.write(HOUSEHOLD_TOML)
        for flag, what in (("*", "\"*\" with keys"), ("https://a.example/path", "a path"),
                           ("null", "\"null\"")):
            out = subprocess.run([binary, "--port=0", "--threads=1", "--household=" + path,
                                  "--cors_origins=" + flag], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, timeout=120)
            check(out.returncode != 0 and "--cors_origins" in out.stderr and
                  "listening" not in out.stdout, "--cors_origins=%s (%s) is refused at start" %
                  (flag, what))


def open_household_any(binary):
    with Server(binary, "--cors_origins=*", household=None) as s:
        st, h, _ = s.request("GET", "/v1/models", headers={"Origin": "http://laptop.local:5173"})
        check(st == 200 and h.get("access-control-allow-origin") == "http://laptop.local:5173",
              "without keys \"*\" echoes any origin, never \"*\" itself")


def off_by_default(binary):
    with Server(binary) as s:
        st, h, _ = preflight(s, PAGE)
        check(st == 401 and no_cors(h) and "vary" not in h,
              "without --cors_origins a keyless OPTIONS is 401, no CORS header")
        st, h, _ = s.request("GET", "/v1/models", key=KEYS["ana"], headers={"Origin": PAGE})
        check(st == 200 and no_cors(h) and "vary" not in h,
              "without --cors_origins answers carry no CORS header")


def main():
    binary = server_binary()
    with Server(binary, "--cors_origins=%s,%s" % (PAGE, OTHER)) as s:
        listed(s)
        unlisted(s)
        not_a_way_around(s)
    preflight_is_a_stranger(binary)
    refused_at_start(binary)
    open_household_any(binary)
    off_by_default(binary)
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
