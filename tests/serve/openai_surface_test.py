"""hearth-serve's OpenAI surface over loopback, on the tiny GGUF model: each
request field the server does not implement is refused (400, OpenAI's error
shape, naming the field) unless it has its neutral value, and each sampling
field it does implement changes the answer as documented."""

import sys

from serve_harness import KEYS, Checks, Server, server_binary

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


def main():
    with Server(server_binary()) as s:
        unimplemented_fields(s)
        implemented_sampling(s)
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
