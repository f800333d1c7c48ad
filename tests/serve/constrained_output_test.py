"""hearth-serve's logprobs, logit_bias, grammar and response_format over
loopback on the tiny GGUF model, streamed and not: OpenAI's logprobs shapes
(chat and completions), every logprob <= 0 and, under greedy decoding, the
sampled token's the top alternative's; a -100 bias on the greedy token
changes the answer; a grammar, json_object and a JSON schema (response_format
json_schema, llama-server's json_schema) constrain it; a grammar that does
not compile, a schema llama.cpp's converter refuses and one past the bounds
are 400 naming their field."""

import json
import sys

from serve_harness import (JSON_PROMPTS, KEYS, PET_SCHEMA, Checks, Server, chat_body,
                           check_json_objects, pet_schema_error, server_binary)

checks = Checks("serve/constrained_output")
check = checks.check

CHAT = "/v1/chat/completions"
COMPLETIONS = "/v1/completions"
KEY = KEYS["ana"]


def chat(**extra):
    return chat_body("Hello", **dict({"max_tokens": 8}, **extra))


def completion(**extra):
    return dict({"model": "tiny", "prompt": "The house", "max_tokens": 8, "temperature": 0},
                **extra)


def chat_entries_ok(entries, n):
    return isinstance(entries, list) and all(
        set(e) == {"token", "logprob", "bytes", "top_logprobs"} and e["logprob"] <= 0 and
        all(isinstance(b, int) and 0 <= b <= 255 for b in e["bytes"]) and
        len(e["top_logprobs"]) == n and
        all(t["logprob"] <= 0 and set(t) == {"token", "logprob", "bytes"} for t in e["top_logprobs"])
        for e in entries)


def greedy_is_top(entries):
    return all(e["top_logprobs"] and abs(e["logprob"] - e["top_logprobs"][0]["logprob"]) < 1e-4
               for e in entries)


def logprobs(s):
    st, _, out = s.request("POST", CHAT, chat(logprobs=True, top_logprobs=3), key=KEY)
    lp = out["choices"][0].get("logprobs") if st == 200 else None
    check(st == 200 and isinstance(lp, dict) and chat_entries_ok(lp.get("content"), 3),
          "chat logprobs: content[] of token, logprob, bytes, top_logprobs[3]")
    check(st == 200 and len(lp["content"]) > 0 and greedy_is_top(lp["content"]),
          "greedy: each sampled token's logprob is the top alternative's")
    st, _, out = s.request("POST", CHAT, chat(), key=KEY)
    check(st == 200 and out["choices"][0].get("logprobs") is None, "no logprobs unless asked")
    r = s.stream(CHAT, chat(logprobs=True, top_logprobs=2), key=KEY)
    streamed = [e for ev in r["events"] if isinstance(ev, dict)
                for c in ev.get("choices", []) if c.get("logprobs")
                for e in c["logprobs"]["content"]]
    check(r["status"] == 200 and chat_entries_ok(streamed, 2) and len(streamed) > 0,
          "streamed chat chunks carry their tokens' logprobs")
    st, _, out = s.request("POST", COMPLETIONS, completion(logprobs=2), key=KEY)
    lp = out["choices"][0].get("logprobs") if st == 200 else None
    check(isinstance(lp, dict) and set(lp) == {"tokens", "token_logprobs", "top_logprobs",
                                               "text_offset"} and
          len(lp["tokens"]) == len(lp["token_logprobs"]) == len(lp["top_logprobs"]) ==
          len(lp["text_offset"]) > 0 and all(v <= 0 for v in lp["token_logprobs"]) and
          all(1 <= len(t) <= 3 for t in lp["top_logprobs"]) and lp["text_offset"][0] == 0,
          "completion logprobs: tokens, token_logprobs, top_logprobs, text_offset")
    check(lp is not None and all(max(t.values()) <= v + 1e-4 for t, v in
                                 zip(lp["top_logprobs"], lp["token_logprobs"])),
          "completion greedy: the sampled token is the likeliest %r" % (lp,))
    r = s.stream(COMPLETIONS, completion(logprobs=1), key=KEY)
    offsets = [o for ev in r["events"] if isinstance(ev, dict)
               for c in ev.get("choices", []) if c.get("logprobs")
               for o in c["logprobs"]["text_offset"]]
    check(r["status"] == 200 and offsets and offsets == sorted(offsets) and offsets[0] == 0,
          "streamed completion offsets continue across chunks")


def first_token_bytes(s, **extra):
    st, _, out = s.request("POST", CHAT, chat(max_tokens=1, logprobs=True, **extra), key=KEY)
    content = out["choices"][0]["logprobs"]["content"] if st == 200 else None
    return content[0]["bytes"] if content else None


def logit_bias(s):
    # The tiny model's vocabulary is bytes: token i is byte i.
    greedy = first_token_bytes(s)
    banned = first_token_bytes(s, logit_bias={str(greedy[0]): -100}) if greedy else None
    check(greedy and banned is not None and banned != greedy,
          "logit_bias -100 on the greedy token changes the answer (%r, %r)" % (greedy, banned))
    st, _, out = s.request("POST", COMPLETIONS, completion(logit_bias={"258": 1}), key=KEY)
    check(st == 400 and out["error"]["param"] == "logit_bias", "a token past the vocabulary is 400")


def grammar(s):
    for path, body in ((CHAT, chat(max_tokens=16)), (COMPLETIONS, completion(max_tokens=16))):
        st, _, out = s.request("POST", path, dict(body, grammar='root ::= "yes" | "no"'), key=KEY)
        c = out["choices"][0] if st == 200 else {}
        text = c.get("text", c.get("message", {}).get("content"))
        check(text in ("yes", "no") and c.get("finish_reason") == "stop",
              "%s: a yes/no grammar answers yes or no (%r)" % (path, text))
        r = s.stream(path, dict(body, grammar='root ::= "yes" | "no"'), key=KEY)
        check(r["status"] == 200 and r["text"] in ("yes", "no"), "%s streamed: yes or no" % path)
        st, _, out = s.request("POST", path, dict(body, grammar="root ::= undefined_rule"), key=KEY)
        check(st == 400 and out["error"]["param"] == "grammar", "%s: a bad grammar is 400" % path)
    st, _, out = s.request("POST", CHAT, chat(grammar="(" * 100 + '"a"' + ")" * 100), key=KEY)
    check(st == 400 and out["error"]["param"] == "grammar", "a deeply nested grammar is 400")


def json_object(s):
    answers = []
    for prompt in JSON_PROMPTS:
        body = chat(max_tokens=200, response_format={"type": "json_object"},
                    messages=[{"role": "user", "content": prompt}])
        st, _, out = s.request("POST", CHAT, body, key=KEY)
        c = out["choices"][0] if st == 200 else {}
        answers.append((st, c.get("message", {}).get("content", ""),
                        c.get("finish_reason") == "stop"))
    check_json_objects(check, answers, "json_object")


def schema_format(schema):
    return {"type": "json_schema", "json_schema": {"name": "pet", "strict": True,
                                                   "schema": schema}}


def json_schema(s):
    cases = [(CHAT, chat(max_tokens=200, response_format=schema_format(PET_SCHEMA),
                         messages=[{"role": "user", "content": p}])) for p in JSON_PROMPTS]
    cases += [(COMPLETIONS, completion(max_tokens=200, json_schema=PET_SCHEMA)),
              (CHAT, chat(max_tokens=200, temperature=1.5, seed=3, json_schema=PET_SCHEMA))]
    for path, body in cases:
        st, _, out = s.request("POST", path, body, key=KEY)
        c = out["choices"][0] if st == 200 else {}
        text = c.get("text", c.get("message", {}).get("content"))
        why = pet_schema_error(text or "") if c.get("finish_reason") == "stop" else "did not end"
        check(st == 200 and why is None, "%s: the answer follows the schema (%s; %r)" %
              (path, why, text))
    r = s.stream(CHAT, chat(max_tokens=200, response_format=schema_format(PET_SCHEMA)), key=KEY)
    check(r["status"] == 200 and pet_schema_error(r["text"]) is None,
          "streamed: the answer follows the schema (%r)" % r["text"])


def json_schema_refused(s):
    field = "response_format.json_schema.schema"
    deep = {}
    for _ in range(40):
        deep = {"type": "array", "items": deep}
    for schema, says, what in (({"type": "frobnicate"}, "unrecognized type", "a bad type"),
                               ({"$ref": "#/nowhere"}, "$ref", "an unresolved $ref"),
                               (deep, "deep", "a schema nested 40 deep"),
                               ({"type": "array", "minItems": 5, "maxItems": 3}, "n < m",
                                "minItems above maxItems"),
                               ({"type": "string", "maxLength": 100000}, "at most 2000",
                                "maxLength past llama.cpp's repetition bound")):
        st, _, out = s.request("POST", CHAT, chat(response_format=schema_format(schema)), key=KEY)
        err = out.get("error", {}) if isinstance(out, dict) else {}
        check(st == 400 and err.get("param") == field and says in err.get("message", ""),
              "%s is 400 naming %s (%s)" % (what, field, err.get("message")))
    st, _, out = s.request("POST", COMPLETIONS, completion(json_schema={"enum": []}), key=KEY)
    check(st == 400 and out["error"]["param"] == "json_schema", "json_schema's own errors name it")
    st, _ = s.request("GET", "/health")[:2]
    check(st == 200, "the server is up after the hostile schemas")


def main():
    with Server(server_binary()) as s:
        logprobs(s)
        logit_bias(s)
        grammar(s)
        json_object(s)
        json_schema(s)
        json_schema_refused(s)
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
