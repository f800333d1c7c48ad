"""hearth-serve's POST /tokenize and POST /detokenize over loopback, on the
tiny GGUF model (byte level: token i is byte i, BOS 256, EOS 257): the
shapes llama-server answers with, the keys of the generation endpoints,
the work on the interactive job queue, the prompt's byte bound before any
tokenising, and every hostile body refused 400 naming its field."""

import json
import sys

from serve_harness import (ADMIN_KEY, KEYS, SCRAPE_KEY, Checks, Server, server_binary,
                           start_draining)

checks = Checks("serve/tokenize")
check = checks.check

# The tiny model's: 8192 cells (hearth-serve's default --n_ctx), no token
# longer than 4 bytes ("</s>").
CONTEXT = 8192
MAX_PROMPT_BYTES = (CONTEXT - 1) * 4


def bad_field(resp, field, status=400):
    st, _, body = resp
    err = body.get("error") if isinstance(body, dict) else None
    return (st == status and isinstance(err, dict) and err.get("param") == field and
            err.get("type") == "invalid_request_error" and ("'%s'" % field) in err["message"])


def interactive_submitted(s):
    queues = s.status()["jobs"]["queues"]
    return next(q["submitted"] for q in queues if q["name"] == "interactive")


def shapes(s):
    key = KEYS["ana"]
    st, h, out = s.request("POST", "/tokenize", {"content": "Hello"}, key=key)
    check(st == 200 and out == {"tokens": [72, 101, 108, 108, 111]} and
          h["content-type"] == "application/json", "/tokenize gives the ids, one per byte")
    # The tiny model asks for no BOS: add_special counts as a prompt does.
    st, _, out = s.request("POST", "/tokenize", {"content": "Hi", "add_special": True}, key=key)
    _, _, answer = s.request("POST", "/v1/completions",
                             {"model": "tiny", "prompt": "Hi", "max_tokens": 1}, key=key)
    check(st == 200 and out["tokens"][-2:] == [72, 105] and
          len(out["tokens"]) == answer["usage"]["prompt_tokens"],
          "add_special gives the prompt's own count")
    st, _, out = s.request("POST", "/tokenize", {"content": "a<s>"}, key=key)
    check(st == 200 and out == {"tokens": [97, 256]}, "special tokens are parsed by default")
    st, _, out = s.request("POST", "/tokenize", {"content": "a<s>", "parse_special": False},
                           key=key)
    check(st == 200 and len(out["tokens"]) == 4, "parse_special false reads them as text")
    st, _, out = s.request("POST", "/tokenize", {"content": "", "add_special": False}, key=key)
    check(st == 200 and out == {"tokens": []}, "empty content gives no tokens")
    st, _, out = s.request("POST", "/tokenize", {"content": "h\u00e9<s>", "with_pieces": True},
                           key=key)
    check(st == 200 and out == {"tokens": [{"id": 104, "piece": "h"}, {"id": 0xc3, "piece": [0xc3]},
                                           {"id": 0xa9, "piece": [0xa9]},
                                           {"id": 256, "piece": "<s>"}]},
          "with_pieces: id and piece, a piece of half a character as its bytes")
    st, _, out = s.request("POST", "/detokenize", {"tokens": [256, 72, 0xc3, 0xa9, 257]}, key=key)
    check(st == 200 and out == {"content": "<s>H\u00e9</s>"},
          "/detokenize joins the pieces, control tokens spelled out")
    st, _, out = s.request("POST", "/detokenize", {"tokens": []}, key=key)
    check(st == 200 and out == {"content": ""}, "no tokens give empty content")
    text = "The house is warm. \u2603 " * 20
    st, _, ids = s.request("POST", "/tokenize", {"content": text}, key=key)
    st2, _, back = s.request("POST", "/detokenize", ids, key=key)
    check(st == st2 == 200 and back["content"] == text, "detokenize(tokenize(x)) is x")
    before = interactive_submitted(s)
    s.request("POST", "/tokenize", {"content": "x"}, key=key)
    s.request("POST", "/detokenize", {"tokens": [1]}, key=key)
    check(interactive_submitted(s) == before + 2, "each call is one job of the interactive queue")
    sent = {"X-Request-Id": "tok-1"}
    st, h, _ = s.request("POST", "/tokenize", {"content": "x"}, key=key, headers=sent)
    check(st == 200 and h.get("x-request-id") == "tok-1", "X-Request-Id is echoed")


def keys(s):
    for path, body in (("/tokenize", {"content": "x"}), ("/detokenize", {"tokens": [1]})):
        for key, status in ((None, 401), ("sk-not-a-key", 401), (SCRAPE_KEY, 403),
                            (ADMIN_KEY, 403), (KEYS["ben"], 200)):
            generation = s.request("POST", "/v1/completions",
                                   {"model": "tiny", "prompt": "x", "max_tokens": 1}, key=key)[0]
            st = s.request("POST", path, body, key=key)[0]
            check(st == status == generation,
                  "%s with key %r is %d like /v1/completions" % (path, key, status))


def hostile(s):
    key = KEYS["ana"]
    for body, field in (({}, "content"), ({"content": 7}, "content"),
                        ({"content": ["a", 97]}, "content"),
                        ({"content": "x", "add_special": "yes"}, "add_special"),
                        ({"content": "x", "with_pieces": 1}, "with_pieces"),
                        ({"content": "x", "parse_special": []}, "parse_special")):
        check(bad_field(s.request("POST", "/tokenize", body, key=key), field),
              "/tokenize %s: 400 naming %s" % (json.dumps(body)[:60], field))
    for tokens in ([1.5], ["72"], [-1], [258], [10 ** 30], [None], [[1]], {"0": 1}, "72", None):
        resp = s.request("POST", "/detokenize", {"tokens": tokens}, key=key)
        check(bad_field(resp, "tokens") and len(resp[2]["error"]["message"]) < 200,
              "/detokenize tokens=%s: 400 naming tokens" % json.dumps(tokens)[:40])
    resp = s.request("POST", "/detokenize", {"tokens": [72] * (CONTEXT + 1)}, key=key)
    check(bad_field(resp, "tokens") and "at most %d" % CONTEXT in resp[2]["error"]["message"],
          "/detokenize of more ids than the context is 400 before any is read")
    check(s.request("POST", "/detokenize", {"tokens": [72] * CONTEXT}, key=key)[0] == 200,
          "/detokenize of the context's count is served")
    for path in ("/tokenize", "/detokenize"):
        for body in ("{", "[1, 2]", '"x"'):
            st, _, out = s.request("POST", path, body, key=key,
                                   headers={"Content-Type": "application/json"})
            check(st == 400 and out["error"]["type"] == "invalid_request_error",
                  "%s body %r: 400 OpenAI-shaped" % (path, body))
    # The prompt's byte bound, before any tokenising: no answer repeats the text.
    st, _, out = s.request("POST", "/tokenize", {"content": "a" * (MAX_PROMPT_BYTES + 1)}, key=key)
    check(st == 413 and out["error"]["code"] == "context_length_exceeded" and
          "at most %d bytes" % MAX_PROMPT_BYTES in out["error"]["message"],
          "content past the byte bound is 413 before tokenising")
    st, _, out = s.request("POST", "/tokenize", {"content": "a" * CONTEXT}, key=key)
    check(st == 413 and out["error"]["code"] == "context_length_exceeded" and
          "at most %d tokens" % (CONTEXT - 1) in out["error"]["message"],
          "content within the bytes but past the context's tokens is 413")
    st, _, out = s.request("POST", "/tokenize", {"content": "a" * (CONTEXT - 1)}, key=key)
    check(st == 200 and len(out["tokens"]) == CONTEXT - 1,
          "content of the context's count is served")


def refused_while_draining(binary):
    with Server(binary) as s:
        held = start_draining(s)
        for path, body in (("/tokenize", {"content": "x"}), ("/detokenize", {"tokens": [1]})):
            st, h, out = s.request("POST", path, body, key=KEYS["ana"], timeout=10)
            generation = s.request("POST", "/v1/completions",
                                   {"model": "tiny", "prompt": "x", "max_tokens": 1},
                                   key=KEYS["ana"], timeout=10)[0]
            check(st == generation == 503 and out["error"]["type"] == "server_error" and
                  "retry-after" in h, "%s is 503 while draining, like generation" % path)
        held.close()


def main():
    with Server(server_binary()) as s:
        shapes(s)
        keys(s)
        hostile(s)
    with Server(server_binary(), household=None) as s:
        st, _, out = s.request("POST", "/tokenize", {"content": "ok"})
        check(st == 200 and out == {"tokens": [111, 107]},
              "without a household file no key is needed")
    refused_while_draining(server_binary())
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
