"""hearth-serve's OpenAI surface over loopback, on the tiny GGUF model: each
request field the server does not implement is refused (400, OpenAI's error
shape, naming the field) unless it has its neutral value, and each sampling
field it does implement changes the answer as documented; GET /health in
llama-server's shape and GET /v1/models/{id} behind the same keys as
/v1/models; X-Request-Id on every response, the client's when valid, else a
fresh random one; --help lists every flag."""

import json
import os
import re
import socket
import subprocess
import sys

from serve_harness import KEYS, SCRAPE_KEY, Checks, Server, server_binary, start_draining

checks = Checks("serve/openai_surface")
check = checks.check

CHAT = "/v1/chat/completions"
COMPLETIONS = "/v1/completions"


def chat(**extra):
    body = {"model": "tiny", "messages": [{"role": "user", "content": "Hello"}],
            "max_tokens": 2, "temperature": 0}
    body.update(extra)
    return body


def completion(**extra):
    body = {"model": "tiny", "prompt": "The house", "max_tokens": 24, "temperature": 0}
    body.update(extra)
    return body


# Each with a value that asks for something the server does not do.
REFUSED = {
    "n_probs": 2,
    "tool_choice": "required",
    "modalities": ["text", "audio"],
    "typical_p": 0.5,
    "mirostat": 2,
    "n_predict": 8,
    "repeat_last_n": 256,
}

NEUTRAL = {
    "response_format": {"type": "text"},
    "grammar": "",
    "logit_bias": {},
    "top_logprobs": 0,
    "presence_penalty": 0,
    "frequency_penalty": 0,
    "repeat_penalty": 1,
    "top_k": 0,
    "min_p": 0,
    "tool_choice": "none",
    "user": "ana",
}


def refused_field(st, body, field):
    err = body.get("error") if isinstance(body, dict) else None
    return (st == 400 and isinstance(err, dict) and err.get("type") == "invalid_request_error" and
            ("'%s'" % field) in err.get("message", "") and "absent" in err.get("message", "") and
            err.get("param") == field)


def unimplemented_fields(s):
    for field, value in REFUSED.items():
        for path, body in ((CHAT, chat(**{field: value})), (COMPLETIONS, completion(**{field: value}))):
            st, _, out = s.request("POST", path, body, key=KEYS["ana"])
            check(refused_field(st, out, field), "%s %s=%r: 400 naming the field" % (path, field, value))
    st, _, out = s.request("POST", CHAT, chat(**NEUTRAL), key=KEYS["ana"])
    check(st == 200 and out["usage"]["completion_tokens"] == 2,
          "every neutral value together is served")
    st, _, out = s.request("POST", CHAT, chat(top_k="40"), key=KEYS["ana"])
    check(st == 400 and "'top_k'" in out["error"]["message"] and out["error"]["param"] == "top_k",
          "a wrongly typed top_k is 400 with param top_k")
    st, _, out = s.request("POST", CHAT, chat(grammar="x" * 200000), key=KEYS["ana"])
    check(st == 400 and out["error"]["param"] == "grammar" and len(out["error"]["message"]) < 300,
          "a huge grammar is refused without being echoed")


def text_of(s, **extra):
    st, _, out = s.request("POST", COMPLETIONS, completion(**extra), key=KEYS["ana"])
    return out["choices"][0]["text"] if st == 200 else None


def implemented_sampling(s):
    greedy = text_of(s)
    check(greedy is not None and len(greedy) > 0, "greedy answer")
    hot = [text_of(s, temperature=2, seed=k) for k in range(3)]
    check(any(t != greedy for t in hot), "temperature 2 alone leaves the greedy answer")
    # Keeping only the likeliest token makes any temperature greedy.
    check(all(text_of(s, temperature=2, seed=k, top_k=1) == greedy for k in range(3)),
          "top_k 1 at temperature 2 gives the greedy answer")
    check(all(text_of(s, temperature=2, seed=k, min_p=1) == greedy for k in range(3)),
          "min_p 1 at temperature 2 gives the greedy answer")
    for field, value in (("repeat_penalty", 10), ("presence_penalty", 2), ("frequency_penalty", 2)):
        check(text_of(s, **{field: value}) not in (None, greedy),
              "%s %s changes the greedy answer" % (field, value))
    check(text_of(s, repeat_penalty=10) == text_of(s, repeat_penalty=10),
          "a penalised greedy answer is still deterministic")


def is_error(resp, status, code=None):
    st, _, body = resp
    err = body.get("error") if isinstance(body, dict) else None
    return (st == status and isinstance(err, dict) and isinstance(err.get("message"), str) and
            "type" in err and "param" in err and (code is None or err.get("code") == code))


def health_and_models(s):
    for key in (None, KEYS["ana"], "sk-not-a-key"):
        st, h, body = s.request("GET", "/health", key=key)
        check(st == 200 and body == {"status": "ok"} and h["content-type"] == "application/json",
              "/health is 200 {\"status\": \"ok\"} with key %r" % key)
    check(s.request("GET", "/healthz")[:3:2] == (200, {"status": "ok"}), "/healthz unchanged")
    st, _, listed = s.request("GET", "/v1/models", key=KEYS["ana"])
    for model in listed["data"]:
        st, _, body = s.request("GET", "/v1/models/" + model["id"], key=KEYS["ana"])
        check(st == 200 and body == model, "/v1/models/%s is its /v1/models entry" % model["id"])
    missing = s.request("GET", "/v1/models/gpt-4o", key=KEYS["ana"])
    check(is_error(missing, 404, "model_not_found") and "gpt-4o" in missing[2]["error"]["message"],
          "an unknown model id is 404 model_not_found, OpenAI-shaped")
    huge = s.request("GET", "/v1/models/" + "a" * 3000, key=KEYS["ana"])
    check(is_error(huge, 404) and len(huge[2]["error"]["message"]) < 300,
          "a 3,000-byte model id is 404 without being echoed")
    too_long = s.request("GET", "/v1/models/" + "a" * 20000, key=KEYS["ana"])
    check(is_error(too_long, 414, "uri_too_long") and
          too_long[2]["error"]["type"] == "invalid_request_error",
          "a 20,000-byte path is 414 uri_too_long, OpenAI-shaped")
    odd = s.request("GET", "/v1/models/%FF%00tiny", key=KEYS["ana"])
    check(is_error(odd, 404), "a model id of invalid UTF-8 and NUL is 404")
    # The same keys as /v1/models: none is 401, a scrape key 403.
    for key, status in ((None, 401), ("sk-not-a-key", 401), (SCRAPE_KEY, 403)):
        listed_st = s.request("GET", "/v1/models", key=key)[0]
        st = s.request("GET", "/v1/models/tiny", key=key)[0]
        check(st == status == listed_st, "/v1/models/tiny with key %r is %d like /v1/models" %
              (key, status))


FRESH_ID = re.compile(r"^req_[0-9a-f]{32}$")


def raw_exchange(port, head, body=b""):
    """Sends bytes as they are; returns (status, {lower-case name: [values]})."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(head + body)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    lines = data.split(b"\r\n\r\n")[0].decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers.setdefault(name.strip().lower(), []).append(value.strip())
    return int(lines[0].split()[1]), headers


def request_ids(s):
    sent = {"X-Request-Id": "trace-0af7651916cd43dd8448eb211c80319c"}
    calls = [
        ("GET", "/health", None, None, 200),
        ("GET", "/v1/models", None, KEYS["ana"], 200),
        ("GET", "/v1/models", None, None, 401),
        ("GET", "/v1/models/nope", None, KEYS["ana"], 404),
        ("GET", "/no/such/route", None, KEYS["ana"], 404),
        ("GET", "/metrics", None, KEYS["ana"], 200),
        ("POST", CHAT, chat(), KEYS["ana"], 200),
        ("POST", CHAT, chat(grammar="x"), KEYS["ana"], 400),
        ("POST", CHAT, "{", KEYS["ana"], 400),
    ]
    for method, path, body, key, status in calls:
        st, h, _ = s.request(method, path, body, key=key, headers=sent)
        check(st == status and h.get("x-request-id") == sent["X-Request-Id"],
              "%s %s (%d) echoes the client's X-Request-Id" % (method, path, status))
        st, h, _ = s.request(method, path, body, key=key)
        check(st == status and FRESH_ID.match(h.get("x-request-id", "")),
              "%s %s (%d) without one gets a fresh req_ id" % (method, path, status))
    conn = s.connect()
    conn.request("POST", CHAT, body=json.dumps(chat(stream=True)),
                 headers=dict(sent, Authorization="Bearer " + KEYS["ana"]))
    resp = conn.getresponse()
    streamed = resp.read().decode("utf-8", "replace")
    conn.close()
    check(resp.status == 200 and resp.getheader("X-Request-Id") == sent["X-Request-Id"] and
          streamed.rstrip().endswith("data: [DONE]"), "a streamed answer echoes it too")
    # Early answers, written before the body is read.
    port = s.port
    st, h = raw_exchange(port, b"POST /v1/completions HTTP/1.1\r\nHost: x\r\n"
                               b"Authorization: Bearer sk-ana\r\nX-Request-Id: early-1\r\n\r\n")
    check(st == 411 and h.get("x-request-id") == ["early-1"], "a 411 echoes it")
    st, h = raw_exchange(port, b"POST /v1/completions HTTP/1.1\r\nHost: x\r\n"
                               b"Authorization: Bearer sk-ana\r\nX-Request-Id: early-2\r\n"
                               b"Content-Length: 99999999\r\n\r\n")
    check(st == 413 and h.get("x-request-id") == ["early-2"], "a 413 echoes it")
    # Values that are not echoed: each gets one fresh id, never the value.
    # A control byte in any header value makes the head malformed (400).
    bad = {
        "too long": (b"a" * 129, 200),
        "a space": (b"two words", 200),
        "non-ASCII": (b"caf\xc3\xa9", 200),
        "a DEL byte": (b"x\x7fy", 400),
    }
    for what, (value, status) in bad.items():
        st, h = raw_exchange(port, b"GET /health HTTP/1.1\r\nHost: x\r\nX-Request-Id: " + value +
                             b"\r\n\r\n")
        ids = h.get("x-request-id", [])
        check(st == status and len(ids) == 1 and FRESH_ID.match(ids[0]),
              "an X-Request-Id with %s is replaced by a fresh one" % what)
    st, h = raw_exchange(port, b"GET /health HTTP/1.1\r\nHost: x\r\nX-Request-Id: a\r\n"
                               b"X-Request-Id: b\r\n\r\n")
    check(st == 200 and len(h.get("x-request-id", [])) == 1 and FRESH_ID.match(h["x-request-id"][0]),
          "two X-Request-Id headers get one fresh id")
    st, h = raw_exchange(port, b"GET /health HTTP/1.1\r\nHost: x\r\nX-Request-Id: " +
                         b"b" * 128 + b"\r\n\r\n")
    check(st == 200 and h.get("x-request-id") == ["b" * 128], "128 bytes are echoed")
    # One member's id never reaches another request, on its connection or
    # any other.
    conn = s.connect()
    ids = []
    for key, headers in ((KEYS["ana"], {"X-Request-Id": "ana-secret"}), (KEYS["ben"], {}),
                         (KEYS["ben"], {})):
        conn.request("GET", "/v1/models", headers=dict(headers, Authorization="Bearer " + key))
        resp = conn.getresponse()
        resp.read()
        ids.append(resp.getheader("X-Request-Id"))
    conn.close()
    check(ids[0] == "ana-secret" and all(FRESH_ID.match(i) for i in ids[1:]) and ids[1] != ids[2],
          "a kept-alive connection's next requests get fresh, distinct ids")


def head_timeout_id(binary):
    with Server(binary, "--header_timeout=0.3s") as s:
        st, h = raw_exchange(s.port, b"GET /health HTTP/1.1\r\nX-Request-Id: slow\r\n")
        ids = h.get("x-request-id", [])
        check(st == 408 and len(ids) == 1 and FRESH_ID.match(ids[0]),
              "a 408 for a head never finished carries a fresh id, not the partial head's")


SERVE_MAIN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples",
                          "serve", "serve_main.cc")


def help_lists_flags(binary):
    with open(SERVE_MAIN) as f:
        flags = re.findall(r"ABSL_FLAG\(\s*[\w:]+\s*,\s*(\w+)\s*,", f.read())
    check(len(flags) > 20, "serve_main.cc defines the flags (%d found)" % len(flags))
    for option in ("--help", "--helpshort"):
        # Abseil exits 1 after printing usage; the server must not start.
        out = subprocess.run([binary, option], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, timeout=60)
        missing = [f for f in flags if "--%s " % f not in out.stdout]
        check(out.returncode in (0, 1) and "No flags matched" not in out.stdout and not missing and
              "listening" not in out.stdout,
              "%s lists every hearth-serve flag (missing: %s)" % (option, missing))
    out = subprocess.run([binary, "--help"], stdout=subprocess.PIPE, text=True, timeout=60)
    check("Flags from examples/serve/serve_main.cc:" in out.stdout,
          "--help names the flags' file from examples/, not the build machine's path")


def health_while_draining(binary):
    with Server(binary) as s:
        held = start_draining(s)
        st, _, out = s.request("GET", "/health", timeout=10)
        check(is_error((st, None, out), 503) and
              s.request("GET", "/healthz", timeout=10)[:3:2] == (503, {"status": "draining"}),
              "/health is 503 with an OpenAI-shaped error while draining, /healthz as before")
        held.close()


def open_household(binary):
    with Server(binary, household=None) as s:
        st, _, body = s.request("GET", "/v1/models/tiny")
        check(st == 200 and body["id"] == "tiny", "without a household file no key is needed")


def main():
    with Server(server_binary()) as s:
        unimplemented_fields(s)
        implemented_sampling(s)
        health_and_models(s)
        request_ids(s)
    open_household(server_binary())
    head_timeout_id(server_binary())
    health_while_draining(server_binary())
    help_lists_flags(server_binary())
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
