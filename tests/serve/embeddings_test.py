"""hearth-serve's embeddings over loopback, on the tiny GGUF model (n_embd
64): OpenAI's POST /v1/embeddings and Ollama's /api/embed and
/api/embeddings, each input an embedding request (RequestKind::kEmbed) in
the member's queue, run in the household's "embedding" class.

Checked: the shapes both APIs answer with; unit-length vectors; the same text gives the same
vector alone, in a batch, as token ids, beside a streaming chat and through
either API, and different texts different vectors; base64 decodes to the
floats; `dimensions`; inputs beyond the context refused (413) or, with
Ollama's truncate, cut to it; and every hostile body refused naming its
field, the key checked first.
"""

import base64
import math
import struct
import sys
import threading
import time

from serve_harness import KEYS, Checks, Server, chat_body, server_binary, wait_for

checks = Checks("serve/embeddings")
check = checks.check

WIDTH = 64
# A small context keeps the over-long inputs quick on one thread.
CONTEXT = 512
KEY = KEYS["ana"]


def embed(s, inputs, key=KEY, **extra):
    return s.request("POST", "/v1/embeddings", dict({"model": "tiny", "input": inputs}, **extra),
                     key=key)


def vectors(resp):
    st, _, out = resp
    if st != 200:
        return None
    return [d["embedding"] for d in sorted(out["data"], key=lambda d: d["index"])]


def norm(v):
    return math.sqrt(sum(x * x for x in v))


def cosine(a, b):
    return sum(x * y for x, y in zip(a, b)) / (norm(a) * norm(b))


def same(a, b):
    # One float32 pass may round differently from another by a few ulps
    # (batch shapes differ); the same input must point the same way.
    return a is not None and b is not None and len(a) == len(b) and cosine(a, b) > 0.99999


def bad_field(resp, field, status=400):
    st, _, body = resp
    err = body.get("error") if isinstance(body, dict) else None
    return (st == status and isinstance(err, dict) and err.get("param") == field and
            ("'%s'" % field) in err.get("message", ""))


def openai_shapes(s):
    st, h, out = embed(s, "the kitchen light is on")
    check(st == 200 and out["object"] == "list" and out["model"] == "tiny" and
          len(out["data"]) == 1 and out["data"][0]["object"] == "embedding" and
          out["data"][0]["index"] == 0, "one input: a list of one embedding (%s)" % st)
    v = out["data"][0]["embedding"] if st == 200 else []
    check(len(v) == WIDTH and abs(norm(v) - 1) < 1e-4, "%d floats of unit length" % WIDTH)
    check(out.get("usage") == {"prompt_tokens": 23, "total_tokens": 23},
          "usage counts the input's tokens (one per byte) %s" % out.get("usage"))
    check(bool(h.get("x-hearth-request-id")), "the answer names its request id")
    return v


def equivalence(s, kitchen):
    again = vectors(embed(s, "the kitchen light is on"))
    check(same(again and again[0], kitchen), "the same text gives the same vector")
    other = vectors(embed(s, "the garage door is open"))
    check(other is not None and cosine(other[0], kitchen) < 0.9999,
          "another text gives another vector")
    batch = vectors(embed(s, ["the garage door is open", "the kitchen light is on", "hello"]))
    check(batch is not None and len(batch) == 3 and same(batch[1], kitchen) and
          same(batch[0], other[0]), "a batch gives each input's own vector, in order")
    ids = vectors(embed(s, [ord(c) for c in "the kitchen light is on"]))
    check(same(ids and ids[0], kitchen), "token ids give the text's vector")
    id_lists = vectors(embed(s, [[ord(c) for c in "hello"], [ord(c) for c in "the kitchen light is on"]]))
    check(id_lists is not None and same(id_lists[0], batch[2]) and same(id_lists[1], kitchen),
          "arrays of token ids give each text's vector")
    # Beside a chat being generated: the embedding's prefill shares steps
    # with the chat's decodes.
    beside = {}

    def chat():
        beside["chat"] = s.stream("/v1/chat/completions", chat_body("tell me a story", max_tokens=48),
                                  key=KEYS["ben"])
    t = threading.Thread(target=chat)
    t.start()
    while_chatting = [vectors(embed(s, "the kitchen light is on")) for _ in range(3)]
    t.join()
    check(beside["chat"]["status"] == 200 and beside["chat"]["done"], "the chat beside them ends")
    check(all(same(v and v[0], kitchen) for v in while_chatting),
          "batched with a chat's decodes, the vector is the same")


def encodings(s, kitchen):
    st, _, out = embed(s, "the kitchen light is on", encoding_format="base64")
    raw = base64.b64decode(out["data"][0]["embedding"]) if st == 200 else b""
    floats = list(struct.unpack("<%df" % (len(raw) // 4), raw))
    check(len(floats) == WIDTH and same(floats, kitchen), "base64 holds the little-endian floats")
    check(vectors(embed(s, "x", dimensions=WIDTH)) is not None, "dimensions equal to the width pass")
    check(bad_field(embed(s, "x", dimensions=100), "dimensions"), "other dimensions are refused")


def refusals(s):
    st, _, _ = s.request("POST", "/v1/embeddings", {"model": "tiny", "input": "x"})
    check(st == 401, "no key: 401 (%s)" % st)
    st, _, _ = s.request("POST", "/v1/embeddings", "{not json", key=KEY)
    check(st == 400, "a body that is not JSON: 400")
    for body, field in [({"model": "tiny"}, "input"),
                        ({"model": "tiny", "input": ""}, "input"),
                        ({"model": "tiny", "input": []}, "input"),
                        ({"model": "tiny", "input": ["a", ""]}, "input[1]"),
                        ({"model": "tiny", "input": ["a", 7]}, "input[1]"),
                        ({"model": "tiny", "input": ["a"] * 257}, "input"),
                        ({"model": "tiny", "input": [1, -2]}, "input"),
                        ({"model": "tiny", "input": [[1], []]}, "input[1]"),
                        ({"input": "x"}, "model"),
                        ({"model": "tiny", "input": "x", "encoding_format": "hex"}, "encoding_format"),
                        ({"model": "tiny", "input": "x", "n": 2}, "n"),
                        ({"model": "tiny", "input": "x", "temperature": 0.5}, "temperature"),
                        ({"model": "tiny", "input": "x", "dimensions": 0}, "dimensions")]:
        check(bad_field(s.request("POST", "/v1/embeddings", body, key=KEY), field),
              "%s is refused naming %s" % (str(body)[:60], field))
    st, _, out = embed(s, [70000])
    check(st == 400 and "token" in out["error"]["message"], "a token id past the vocabulary: 400")
    st, _, out = embed(s, "y" * (CONTEXT + 10))
    check(st == 413, "an input beyond the context: 413 (%s)" % st)
    st, _, out = embed(s, "x", model="nonesuch")
    check(st == 404, "an unknown model: 404 (%s)" % st)
    # dan's key runs documents; the embedding class is below it, so his
    # calls run there too. An explicit class outside his rights is 403.
    st, _, _ = s.request("POST", "/v1/embeddings", {"model": "tiny", "input": "x"}, key=KEYS["dan"],
                         headers={"X-Hearth-Class": "voice"})
    check(st == 403, "a class outside the key's rights: 403 (%s)" % st)


def runs_as_embedding_class(s):
    def embedded():
        text = s.metrics()
        total = 0.0
        for line in text.splitlines():
            if line.startswith("hearth_requests_arrived_total{") and 'class="embedding"' in line:
                total += float(line.split()[-1])
        return total
    # The metrics page is a snapshot the engine publishes every 250 ms:
    # the calls before this one are all in it after a second.
    time.sleep(1.0)
    before = embedded()
    vectors(embed(s, ["one", "two"]))
    check(wait_for(lambda: embedded() - before == 2), "each input arrived in the embedding class (%s)" %
          (embedded() - before))


def ollama(s, kitchen):
    st, _, out = s.request("POST", "/api/embed",
                           {"model": "tiny", "input": ["the kitchen light is on", "hello"]}, key=KEY)
    check(st == 200 and out.get("model") == "tiny" and len(out.get("embeddings", [])) == 2 and
          out.get("prompt_eval_count") == 28, "/api/embed: two embeddings (%s)" % st)
    if st == 200:
        check(same(out["embeddings"][0], kitchen) and abs(norm(out["embeddings"][1]) - 1) < 1e-4,
              "/api/embed's vectors are OpenAI's, unit length")
    st, _, out = s.request("POST", "/api/embeddings",
                           {"model": "tiny", "prompt": "the kitchen light is on"}, key=KEY)
    v = out.get("embedding") if st == 200 else None
    check(v is not None and len(v) == WIDTH and same(v, kitchen),
          "/api/embeddings: the same vector (%s)" % st)
    long_text = "z" * (CONTEXT + 40)
    st, _, out = s.request("POST", "/api/embed", {"model": "tiny", "input": long_text}, key=KEY)
    check(st == 200 and out.get("prompt_eval_count") == CONTEXT,
          "/api/embed truncates to the context by default (%s, %s)" % (st, out.get("prompt_eval_count")))
    st, _, out = s.request("POST", "/api/embed",
                           {"model": "tiny", "input": long_text, "truncate": False}, key=KEY)
    check(st == 413 and "error" in out, "truncate false: an input beyond the context is refused")
    for body, what in [({"model": "tiny", "input": "x", "options": {"temperature": 1}}, "options"),
                       ({"model": "tiny", "input": "x", "keep_alive": 0}, "keep_alive"),
                       ({"model": "tiny", "input": "x", "format": "json"}, "format"),
                       ({"model": "tiny"}, "input")]:
        st, _, out = s.request("POST", "/api/embed", body, key=KEY)
        check(st == 400 and what in out.get("error", ""), "/api/embed refuses %s" % what)
    st, _, out = s.request("POST", "/api/embeddings", {"model": "tiny", "prompt": ["a", "b"]}, key=KEY)
    check(st == 400 and "prompt" in out.get("error", ""), "/api/embeddings takes one string")
    st, _, _ = s.request("POST", "/api/embed", {"model": "tiny", "input": "x"})
    check(st == 401, "/api/embed without a key: 401")


def main():
    binary = server_binary()
    with Server(binary, "--n_ctx=%d" % CONTEXT) as s:
        kitchen = openai_shapes(s)
        equivalence(s, kitchen)
        encodings(s, kitchen)
        refusals(s)
        runs_as_embedding_class(s)
        ollama(s, kitchen)
        report = s.sanitizer_report()
        check(not report, "no sanitizer report: %s" % report[:400])
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
