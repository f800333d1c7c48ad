"""hearth-serve's Ollama API over loopback, on the tiny GGUF model: /api/chat
streamed as NDJSON (one object a line, done:false records, then a final
done:true record with done_reason, counts and nanosecond durations),
/api/generate whole and raw, both giving the text the OpenAI routes give for
the same request (one scheduler, one request path); /api/tags, /api/show,
/api/ps, /api/version, /api/embed; the keys, class rights and prompt
bound of /v1/chat/completions; format "json" as one JSON object, and a
JSON schema as format followed; refused
fields; errors as {"error": "..."}, and after a stream began as its last
line."""

import json
import re
import signal
import sys

from serve_harness import (JSON_PROMPTS, KEYS, PET_SCHEMA, SCRAPE_KEY, Checks, Server,
                           check_json_objects, pet_schema_error, raw_answer, server_binary,
                           start_draining)

checks = Checks("serve/ollama")
check = checks.check

RFC3339 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")
FINAL_FIELDS = ("total_duration", "load_duration", "prompt_eval_count", "prompt_eval_duration",
                "eval_count", "eval_duration")
# The tiny model's context and longest token (prompt_bound.h).
CONTEXT = 8192
MAX_PROMPT_BYTES = (CONTEXT - 1) * 4


def chat(content="Hello", **extra):
    body = {"model": "tiny", "messages": [{"role": "user", "content": content}],
            "options": {"temperature": 0, "num_predict": 6}}
    body.update(extra)
    return body


def ndjson(s, path, body, key=KEYS["ana"], headers=None, on_line=None):
    """POSTs and reads an NDJSON answer. Returns (status, headers, raw bytes,
    [parsed lines]); a line that is not a JSON object is kept as None."""
    conn = s.connect()
    h = {"Content-Type": "application/json"}
    h.update(headers or {})
    if key:
        h["Authorization"] = "Bearer " + key
    conn.request("POST", path, body=json.dumps(body), headers=h)
    resp = conn.getresponse()
    raw, lines = b"", []
    while True:
        line = resp.readline()
        if not line:
            break
        raw += line
        try:
            parsed = json.loads(line)
        except ValueError:
            parsed = None
        lines.append(parsed if isinstance(parsed, dict) else None)
        if on_line is not None:
            on_line(parsed)
    conn.close()
    return resp.status, {k.lower(): v for k, v in resp.getheaders()}, raw, lines


def is_final(obj, chat_shape=True):
    return (isinstance(obj, dict) and obj.get("done") is True and
            obj.get("done_reason") in ("stop", "length") and
            all(isinstance(obj.get(f), int) and obj[f] >= 0 for f in FINAL_FIELDS) and
            RFC3339.match(obj.get("created_at", "")) is not None and
            (isinstance(obj.get("message", {}).get("content"), str) if chat_shape
             else isinstance(obj.get("response"), str)))


def ollama_error(resp, status):
    st, _, body = resp[:3]
    return (st == status and isinstance(body, dict) and isinstance(body.get("error"), str) and
            len(body) == 1)


def openai_text(s, path, body):
    st, _, out = s.request("POST", path, body, key=KEYS["ana"])
    if st != 200:
        return None
    choice = out["choices"][0]
    return choice["message"]["content"] if "message" in choice else choice["text"]


def streamed_chat(s):
    sent = {"X-Request-Id": "ollama-trace-1"}
    st, h, raw, lines = ndjson(s, "/api/chat", chat(), headers=sent)
    check(st == 200 and h.get("content-type") == "application/x-ndjson",
          "/api/chat streams by default, as application/x-ndjson")
    check(raw.endswith(b"\n") and len(lines) >= 2 and all(l is not None for l in lines) and
          raw.count(b"\n") == len(lines), "every line is one JSON object")
    check(all(line.startswith(b'{"model":"tiny","created_at":') for line in raw.splitlines()),
          "records keep Ollama's field order (model, created_at, ...)")
    body, last = lines[:-1], lines[-1]
    check(all(l.get("done") is False and l.get("model") == "tiny" and
              l["message"]["role"] == "assistant" and isinstance(l["message"]["content"], str) and
              RFC3339.match(l["created_at"]) for l in body),
          "done:false records carry message.content, model and an RFC 3339 created_at")
    check(is_final(last) and last["eval_count"] == 6 and last["done_reason"] == "length" and
          last["prompt_eval_count"] > 0 and last["message"]["content"] == "",
          "the final record: done_reason, counts, durations in ns (%s)" %
          {f: last.get(f) for f in FINAL_FIELDS})
    check(last["total_duration"] >= last["eval_duration"] and
          last["total_duration"] >= last["prompt_eval_duration"],
          "total_duration spans the prompt's and the answer's")
    check(h.get("x-request-id") == "ollama-trace-1" and re.match(r"^[0-9a-f]{24}$",
                                                                  h.get("x-hearth-request-id", "")),
          "X-Request-Id is echoed and X-Hearth-Request-Id is set")
    text = "".join(l["message"]["content"] for l in body)
    same = openai_text(s, "/v1/chat/completions",
                       {"model": "tiny", "messages": [{"role": "user", "content": "Hello"}],
                        "temperature": 0, "max_tokens": 6})
    check(text and text == same, "the same chat on /v1/chat/completions gives the same text")


def generate(s):
    st, h, out = s.request("POST", "/api/generate",
                           {"model": "tiny:latest", "prompt": "The house", "system": "Be brief.",
                            "stream": False, "options": {"temperature": 0, "num_predict": 8}},
                           key=KEYS["ana"])
    check(st == 200 and h.get("content-type") == "application/json" and
          is_final(out, chat_shape=False) and out["eval_count"] == 8 and
          out["model"] == "tiny:latest", "/api/generate stream:false is one final object")
    same = openai_text(s, "/v1/chat/completions",
                       {"model": "tiny", "temperature": 0, "max_tokens": 8,
                        "messages": [{"role": "system", "content": "Be brief."},
                                     {"role": "user", "content": "The house"}]})
    check(st == 200 and out["response"] == same,
          "system and prompt are templated as that chat on /v1/chat/completions")
    st, _, out = s.request("POST", "/api/generate",
                           {"model": "tiny", "prompt": "The house", "raw": True, "stream": False,
                            "options": {"temperature": 0, "num_predict": 8}}, key=KEYS["ana"])
    same = openai_text(s, "/v1/completions",
                       {"model": "tiny", "prompt": "The house", "temperature": 0, "max_tokens": 8})
    check(st == 200 and out["response"] == same, "raw: the prompt as /v1/completions reads it")
    st, _, raw, lines = ndjson(s, "/api/generate", {"model": "tiny", "prompt": "x", "options":
                                                    {"num_predict": 2, "temperature": 0}})
    check(st == 200 and len(lines) >= 2 and all("response" in l for l in lines) and
          is_final(lines[-1], chat_shape=False), "/api/generate streams response records")
    for path, body in (("/api/chat", {"model": "tiny"}), ("/api/generate", {"model": "tiny"})):
        st, _, out = s.request("POST", path, body, key=KEYS["ana"])
        check(st == 200 and out.get("done") is True and out.get("done_reason") == "load",
              "%s with nothing to generate is a load: done_reason \"load\"" % path)


def model_routes(s):
    st, _, out = s.request("GET", "/api/tags", key=KEYS["ana"])
    names = [m.get("name") for m in out.get("models", [])] if st == 200 else []
    check(names == ["tiny", "tiny-voice"], "/api/tags lists the model and its alias")
    m = out["models"][0] if names else {}
    check(isinstance(m.get("size"), int) and m["size"] > 0 and RFC3339.match(m["modified_at"]) and
          isinstance(m.get("digest"), str) and m["details"]["format"] == "gguf" and
          m["details"]["family"] == "llama", "a tag has size, modified_at, digest and details")
    st, _, out = s.request("POST", "/api/show", {"model": "tiny"}, key=KEYS["ana"])
    check(st == 200 and out["model_info"]["general.architecture"] == "llama" and
          "num_ctx %d" % CONTEXT in out["parameters"] and out["capabilities"] == ["completion", "embedding"],
          "/api/show says the architecture, the context and what it can do")
    check(ollama_error(s.request("POST", "/api/show", {"model": "gpt-4o"}, key=KEYS["ana"]), 404),
          "/api/show of an unknown model is 404")
    st, _, out = s.request("GET", "/api/ps", key=KEYS["ana"])
    check(st == 200 and [m["name"] for m in out["models"]] == ["tiny"] and
          out["models"][0]["context_length"] == CONTEXT, "/api/ps shows the loaded model")
    st, _, out = s.request("GET", "/api/version", key=KEYS["ana"])
    check(st == 200 and re.match(r"^\d+\.\d+\.\d+", out.get("version", "")), "/api/version")
    # Embeddings themselves: embeddings_test.py.
    st, _, out = s.request("POST", "/api/embed", {"model": "tiny", "input": "x"}, key=KEYS["ana"])
    check(st == 200 and len(out.get("embeddings", [])) == 1, "/api/embed answers")
    check(ollama_error(s.request("POST", "/api/pull", {"model": "x"}, key=KEYS["ana"]), 404),
          "an Ollama route not served is 404 in Ollama's shape")
    # An answer given before the body is read (no Content-Length: 411).
    data = raw_answer(s.port, b"POST /api/chat HTTP/1.1\r\nHost: x\r\n"
                              b"Authorization: Bearer sk-ana\r\n\r\n")
    head, _, body = data.partition(b"\r\n\r\n")
    check(head.startswith(b"HTTP/1.1 411") and list(json.loads(body)) == ["error"],
          "an early 411 under /api/ is Ollama-shaped too")


def keys_and_rights(s):
    for key, status in ((None, 401), ("sk-not-a-key", 401), (SCRAPE_KEY, 403)):
        for method, path, body in (("POST", "/api/chat", chat()), ("GET", "/api/tags", None),
                                   ("POST", "/api/generate", {"model": "tiny", "prompt": "x"})):
            resp = s.request(method, path, body, key=key)
            openai = s.request("POST", "/v1/chat/completions",
                               {"model": "tiny", "messages": [{"role": "user", "content": "x"}]},
                               key=key)[0]
            check(ollama_error(resp, status) and openai == status,
                  "%s %s with key %r is %d in Ollama's shape, like /v1/chat/completions" %
                  (method, path, key, status))
    # ana's chat key may not use voice, by alias or header.
    for body, headers in ((chat(model="tiny-voice"), None), (chat(), {"X-Hearth-Class": "voice"})):
        resp = s.request("POST", "/api/chat", dict(body, stream=False), key=KEYS["ana"],
                         headers=headers)
        check(ollama_error(resp, 403) and "voice" in resp[2]["error"],
              "a class outside the key's rights is 403 (%s)" % (headers or "alias"))
    st, _, out = s.request("POST", "/api/chat", dict(chat(model="tiny-voice"), stream=False),
                           key=KEYS["ben"])
    check(st == 200 and out["done"], "a voice key may use the voice alias")
    check(ollama_error(s.request("POST", "/api/chat", chat(model="nope"), key=KEYS["ana"]), 404),
          "an unknown model is 404")
    resp = s.request("POST", "/api/generate", {"model": "tiny", "raw": True,
                                               "prompt": "a" * (MAX_PROMPT_BYTES + 1)},
                     key=KEYS["ana"])
    check(ollama_error(resp, 413) and "at most %d bytes" % MAX_PROMPT_BYTES in resp[2]["error"],
          "a prompt past the byte bound is 413 before tokenising")


def refused_fields(s):
    for extra, field in (({"format": {"type": "frobnicate"}}, "'format'"), ({"format": 5}, "'format'"),
                         ({"format": "yaml"}, "'format'"), ({"think": True}, "'think'"),
                         ({"keep_alive": 0}, "'keep_alive'"),
                         ({"tools": [{"type": "function"}]}, "'tools'"),
                         ({"options": {"mirostat": 2}}, "'options.mirostat'"),
                         ({"options": {"num_ctx": 2048}}, "'options.num_ctx'"),
                         ({"options": {"temprature": 0.5}}, "'options.temprature'"),
                         ({"options": {"top_k": "40"}}, "'options.top_k'")):
        resp = s.request("POST", "/api/chat", chat(**extra), key=KEYS["ana"])
        check(ollama_error(resp, 400) and field in resp[2]["error"],
              "%s is refused 400 naming %s" % (json.dumps(extra), field))
    resp = s.request("POST", "/api/chat", "{", key=KEYS["ana"],
                     headers={"Content-Type": "application/json"})
    check(ollama_error(resp, 400), "a body that is not JSON is 400")
    st, _, out = s.request("POST", "/api/chat",
                           chat(stream=False, keep_alive="5m", format="", tools=[], think=False,
                                options={"temperature": 0, "num_predict": 2, "seed": -1,
                                         "num_ctx": CONTEXT, "repeat_last_n": 64}),
                           key=KEYS["ana"])
    check(st == 200 and out["eval_count"] == 2, "every neutral value together is served")


def json_format(s):
    answers = []
    for prompt in JSON_PROMPTS:
        st, _, out = s.request("POST", "/api/chat",
                               chat(prompt, stream=False, format="json",
                                    options={"temperature": 0, "num_predict": 200}),
                               key=KEYS["ana"])
        out = out if st == 200 else {}
        answers.append((st, out.get("message", {}).get("content", ""),
                        out.get("done_reason") == "stop"))
    check_json_objects(check, answers, "format json")
    st, _, raw, lines = ndjson(s, "/api/generate", {"model": "tiny", "prompt": "x",
                                                    "format": "json", "options":
                                                    {"num_predict": 4, "temperature": 0}})
    text = "".join(l.get("response", "") for l in lines if l)
    check(st == 200 and is_final(lines[-1], chat_shape=False) and text.startswith("{"),
          "/api/generate streams a format json answer")
    # A schema as format: the answer follows it (serve_harness.PET_SCHEMA).
    for path, body in (("/api/chat", chat("Hello", stream=False, format=PET_SCHEMA,
                                          options={"temperature": 0, "num_predict": 200})),
                       ("/api/generate", {"model": "tiny", "prompt": "x", "stream": False,
                                          "format": PET_SCHEMA, "options": {"num_predict": 200}})):
        st, _, out = s.request("POST", path, body, key=KEYS["ana"])
        text = (out.get("message", {}).get("content") if path == "/api/chat"
                else out.get("response")) if st == 200 else None
        why = pet_schema_error(text or "")
        check(st == 200 and out.get("done_reason") == "stop" and why is None,
              "%s: format as a schema is followed (%s; %r)" % (path, why, text))


def error_after_stream_began(binary):
    with Server(binary, "--drain_timeout=0.5s") as s:
        lines = []

        def on_line(parsed):
            if not lines:
                s.proc.send_signal(signal.SIGTERM)
            lines.append(parsed)

        st, _, raw, _ = ndjson(s, "/api/chat", chat(options={"num_predict": 4000,
                                                             "temperature": 0}),
                               on_line=on_line)
        last = lines[-1] if lines else None
        check(st == 200 and isinstance(last, dict) and isinstance(last.get("error"), str) and
              all(l.get("done") is False for l in lines[:-1]) and raw.endswith(b"\n"),
              "a failure after the 200 is the stream's last line, {\"error\": ...}")


def refused_while_draining(binary):
    with Server(binary) as s:
        held = start_draining(s)
        resp = s.request("POST", "/api/chat", chat(), key=KEYS["ana"], timeout=10)
        check(ollama_error(resp, 503) and "retry-after" in resp[1],
              "/api/chat is 503 while draining, like generation")
        held.close()


def main():
    with Server(server_binary()) as s:
        streamed_chat(s)
        generate(s)
        model_routes(s)
        keys_and_rights(s)
        refused_fields(s)
        json_format(s)
    error_after_stream_began(server_binary())
    refused_while_draining(server_binary())
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
