"""hearth-serve's OpenAI surface over loopback, on the tiny GGUF model: each
request field the server does not implement is refused (400, OpenAI's error
shape, naming the field) unless it has its neutral value, and each sampling
field it does implement changes the answer as documented; GET /health in
llama-server's shape and GET /v1/models/{id} behind the same keys as
/v1/models."""

import sys

from serve_harness import KEYS, SCRAPE_KEY, Checks, Server, server_binary

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
    "response_format": {"type": "json_object"},
    "grammar": 'root ::= "yes"',
    "json_schema": {"type": "object"},
    "logit_bias": {"42": -100},
    "top_logprobs": 2,
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
            ("'%s'" % field) in err.get("message", "") and "absent" in err.get("message", ""))


def unimplemented_fields(s):
    for field, value in REFUSED.items():
        for path, body in ((CHAT, chat(**{field: value})), (COMPLETIONS, completion(**{field: value}))):
            st, _, out = s.request("POST", path, body, key=KEYS["ana"])
            check(refused_field(st, out, field), "%s %s=%r: 400 naming the field" % (path, field, value))
    st, _, out = s.request("POST", CHAT, chat(**NEUTRAL), key=KEYS["ana"])
    check(st == 200 and out["usage"]["completion_tokens"] == 2,
          "every neutral value together is served")
    st, _, out = s.request("POST", CHAT, chat(top_k="40"), key=KEYS["ana"])
    check(st == 400 and "'top_k'" in out["error"]["message"], "a wrongly typed top_k is 400")
    st, _, out = s.request("POST", CHAT, chat(grammar="x" * 200000), key=KEYS["ana"])
    check(refused_field(st, out, "grammar") and len(out["error"]["message"]) < 300,
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
    odd = s.request("GET", "/v1/models/%FF%00tiny", key=KEYS["ana"])
    check(is_error(odd, 404), "a model id of invalid UTF-8 and NUL is 404")
    # The same keys as /v1/models: none is 401, a scrape key 403.
    for key, status in ((None, 401), ("sk-not-a-key", 401), (SCRAPE_KEY, 403)):
        listed_st = s.request("GET", "/v1/models", key=key)[0]
        st = s.request("GET", "/v1/models/tiny", key=key)[0]
        check(st == status == listed_st, "/v1/models/tiny with key %r is %d like /v1/models" %
              (key, status))


def open_household(binary):
    with Server(binary, household=None) as s:
        st, _, body = s.request("GET", "/v1/models/tiny")
        check(st == 200 and body["id"] == "tiny", "without a household file no key is needed")


def main():
    with Server(server_binary()) as s:
        unimplemented_fields(s)
        implemented_sampling(s)
        health_and_models(s)
    open_household(server_binary())
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
