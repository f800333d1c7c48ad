"""Every field hearth-serve's OpenAI endpoints accept, over loopback on the
tiny GGUF model: each field a parser reads changes the answer as
documented; each field of the unsupported table is refused (400 naming it)
at a value that asks for something, and served at its neutral one; the
informational fields (user, ...) are served and change nothing, as at
OpenAI; any other field is refused, never ignored.

The field lists are read from the server's own tables (kChatFields and
kCompletionFields in openai_request.cc, kUnsupported in
unsupported_fields.cc, kInformationalFields in unsupported_fields.h), so a
field added there without a case here fails this test."""

import os
import re
import sys

from serve_harness import KEYS, Checks, Server, server_binary

checks = Checks("serve/openai_fields")
check = checks.check

CHAT = "/v1/chat/completions"
COMPLETIONS = "/v1/completions"
KEY = KEYS["ana"]
SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "serve",
                   "src")


def table(file, name):
    """The quoted field names of the C++ array `name` in `file`."""
    with open(os.path.join(SRC, file)) as f:
        text = f.read()
    # kUnsupported's rows are {"field", neutral, "allowed"}, one a line or
    # more, and its array ends on a line of its own; the others are names.
    rows = name == "kUnsupported"
    m = re.search(r"\b%s\[\]\s*=\s*\{(.*?)%s\};" % (name, "\n" if rows else ""), text, re.S)
    if not m:
        return []
    return re.findall(r'\{\s*"(\w+)"\s*,' if rows else r'"(\w+)"', m.group(1))


def body_for(path, **extra):
    if path == CHAT:
        body = {"model": "tiny", "messages": [{"role": "user", "content": "Hello"}]}
    else:
        body = {"model": "tiny", "prompt": "The house"}
    body.update({"max_tokens": 8, "temperature": 0})
    body.update(extra)
    return {k: v for k, v in body.items() if v is not DROP}


DROP = object()


def text_of(out):
    c = out["choices"][0]
    return c["message"]["content"] if "message" in c else c["text"]


class Ask:
    """POSTs bodies to one endpoint; answer() is (status, parsed body)."""

    def __init__(self, s, path):
        self.s, self.path = s, path

    def answer(self, **extra):
        st, _, out = self.s.request("POST", self.path, body_for(self.path, **extra), key=KEY)
        return st, out

    def text(self, **extra):
        st, out = self.answer(**extra)
        return text_of(out) if st == 200 else None


def hot_texts(a, **extra):
    return [a.text(temperature=2, seed=k, **extra) for k in range(4)]


def cut_to_greedy(field, value):
    """At temperature 2 the answer leaves the greedy one; `field` at `value`
    keeps only the likeliest token, so it is greedy again."""
    def case(a):
        greedy = a.text()
        return (any(t != greedy for t in hot_texts(a)) and
                all(t == greedy for t in hot_texts(a, **{field: value})))
    return case


def penalised(field, value):
    def case(a):
        greedy = a.text(max_tokens=24)
        return greedy is not None and a.text(max_tokens=24, **{field: value}) not in (None, greedy)
    return case


def budget(field):
    def case(a):
        st, out = a.answer(**{field: 3})
        return st == 200 and out["usage"]["completion_tokens"] == 3
    return case


def model_case(a):
    st, out = a.answer(model="no-such-model")
    return st == 404 and out["error"]["code"] == "model_not_found" and a.answer()[0] == 200


def seed_case(a):
    again = [a.text(temperature=2, seed=7) for _ in range(2)]
    return again[0] is not None and again[0] == again[1] and len(set(hot_texts(a))) > 1


def n_case(a):
    # Two choices of one prompt: sampled apart, and choice k is what seed + k
    # gives alone (greedy, both are the one greedy answer).
    st, out = a.answer(n=2, temperature=2, seed=3)
    if st != 200 or len(out["choices"]) != 2 or [c["index"] for c in out["choices"]] != [0, 1]:
        return False
    texts = [text_of({"choices": [c]}) for c in out["choices"]]
    greedy = a.answer(n=2)[1]["choices"]
    return (texts == [a.text(temperature=2, seed=3), a.text(temperature=2, seed=4)] and
            texts[0] != texts[1] and text_of({"choices": [greedy[0]]}) == text_of({"choices": [greedy[1]]}) and
            a.answer(n=9)[0] == 400)


def logit_bias_case(a):
    # The tiny model's vocabulary is bytes: token 65 is "A", which +100 makes
    # the likeliest at every step.
    return a.text(max_tokens=4) != "AAAA" and a.text(max_tokens=4, logit_bias={"65": 100}) == "AAAA"


def grammar_case(a):
    st, out = a.answer(grammar='root ::= "yes" | "no"')
    return st == 200 and text_of(out) in ("yes", "no") and a.text() not in ("yes", "no")


def response_format_case(a):
    text = a.text(max_tokens=4, response_format={"type": "json_object"})
    return text is not None and text.startswith("{") and not a.text().startswith("{")


def json_schema_case(a):
    # llama-server's field: a schema the answer follows, here one digit.
    digit = {"type": "integer", "minimum": 0, "maximum": 9}
    text = a.text(max_tokens=4, json_schema=digit)
    return text is not None and text.strip().isdigit() and not a.text().strip().isdigit()


def stream_case(a):
    st, h, out = a.s.request("POST", a.path, body_for(a.path, stream=True), key=KEY)
    return st == 200 and h["content-type"].startswith("text/event-stream") and \
        str(out).rstrip().endswith("data: [DONE]")


def stream_options_case(a):
    plain = a.s.stream(a.path, body_for(a.path), key=KEY)
    usage = a.s.stream(a.path, body_for(a.path, stream_options={"include_usage": True}), key=KEY)
    return plain["usage"] is None and usage["usage"] and usage["usage"]["completion_tokens"] == 8


def stop_case(a):
    # A grammar fixes the answer, so the stop string's cut is known.
    fixed = 'root ::= "yes, and no"'
    st, out = a.answer(max_tokens=16, grammar=fixed, stop=[", "])
    return (a.text(max_tokens=16, grammar=fixed) == "yes, and no" and st == 200 and
            text_of(out) == "yes" and out["choices"][0]["finish_reason"] == "stop")


def prompt_tokens(a, **extra):
    st, out = a.answer(**extra)
    return out["usage"]["prompt_tokens"] if st == 200 else None


def messages_case(a):
    longer = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hello"}]
    return None not in (prompt_tokens(a), prompt_tokens(a, messages=longer)) and \
        prompt_tokens(a) != prompt_tokens(a, messages=longer)


def prompt_case(a):
    return None not in (prompt_tokens(a), prompt_tokens(a, prompt="A longer prompt, this")) and \
        prompt_tokens(a) != prompt_tokens(a, prompt="A longer prompt, this")


def logprobs_case(a):
    st, out = a.answer(logprobs=True if a.path == CHAT else 2)
    plain = a.answer()[1]["choices"][0].get("logprobs")
    return st == 200 and out["choices"][0].get("logprobs") and plain is None


def top_logprobs_case(a):
    if a.path == COMPLETIONS:  # a chat field, read there to point at 'logprobs'
        st, out = a.answer(top_logprobs=2)
        return refused(st, out, "top_logprobs") and a.answer(top_logprobs=0)[0] == 200
    lens = []
    for n in (1, 3):
        st, out = a.answer(logprobs=True, top_logprobs=n)
        lens.append(len(out["choices"][0]["logprobs"]["content"][0]["top_logprobs"])
                    if st == 200 else None)
    return lens == [1, 3]


# Each field a parser reads: how it changes the answer.
IMPLEMENTED = {
    "model": model_case,
    "max_tokens": budget("max_tokens"),
    "max_completion_tokens": budget("max_completion_tokens"),
    "temperature": lambda a: any(t != a.text() for t in hot_texts(a)),
    "top_p": cut_to_greedy("top_p", 1e-9),
    "top_k": cut_to_greedy("top_k", 1),
    "min_p": cut_to_greedy("min_p", 1),
    "repeat_penalty": penalised("repeat_penalty", 10),
    "presence_penalty": penalised("presence_penalty", 2),
    "frequency_penalty": penalised("frequency_penalty", 2),
    "seed": seed_case,
    "n": n_case,
    "logit_bias": logit_bias_case,
    "grammar": grammar_case,
    "response_format": response_format_case,
    "json_schema": json_schema_case,
    "stream": stream_case,
    "stream_options": stream_options_case,
    "stop": stop_case,
    "messages": messages_case,
    "prompt": prompt_case,
    "logprobs": logprobs_case,
    "top_logprobs": top_logprobs_case,
}

# Each field of the unsupported table: (a value that asks for something,
# the neutral value; None: only null or absent is neutral).
REFUSED = {
    "best_of": (3, 1),
    "echo": (True, False),
    "tools": ([{"type": "function", "function": {"name": "f"}}], []),
    "functions": ([{"name": "f"}], []),
    "tool_choice": ("required", "none"),
    "function_call": ({"name": "f"}, "auto"),
    "suffix": ("the end", ""),
    "modalities": (["text", "audio"], ["text"]),
    "audio": ({"voice": "alloy", "format": "wav"}, None),
    "prediction": ({"type": "content", "content": "x"}, None),
    "reasoning_effort": ("low", None),
    "web_search_options": ({}, None),
    "typical_p": (0.5, 1),
    "mirostat": (2, 0),
    "dynatemp_range": (0.5, 0),
    "xtc_probability": (0.5, 0),
    "dry_multiplier": (0.8, 0),
    "top_n_sigma": (1.5, -1),
    "n_probs": (2, 0),
    "ignore_eos": (True, False),
    "n_predict": (8, None),
    "store": (True, False),
    "service_tier": ("flex", "auto"),
    "parallel_tool_calls": ("yes", True),
    "repeat_last_n": (128, 64),
    "penalty_last_n": (0, 64),
}

INFORMATIONAL = {"user": "ana-phone", "safety_identifier": "hash-of-ana", "metadata": {"k": "v"}}


def refused(st, out, param):
    err = out.get("error") if isinstance(out, dict) else None
    return (st == 400 and isinstance(err, dict) and err.get("param") == param and
            err.get("type") == "invalid_request_error" and
            ("'%s'" % param) in err.get("message", ""))


def coverage():
    """The server's tables, and that each of their fields has a case here."""
    fields = {CHAT: table("openai_request.cc", "kChatFields"),
              COMPLETIONS: table("openai_request.cc", "kCompletionFields")}
    unsupported = table("unsupported_fields.cc", "kUnsupported")
    informational = table("unsupported_fields.h", "kInformationalFields")
    check(len(fields[CHAT]) > 15 and len(fields[COMPLETIONS]) > 15 and len(unsupported) > 20 and
          informational, "the server's field tables are read (%d, %d, %d, %d)" %
          (len(fields[CHAT]), len(fields[COMPLETIONS]), len(unsupported), len(informational)))
    for path, names in fields.items():
        missing = [f for f in names if f not in IMPLEMENTED]
        check(not missing, "%s: every field it reads has a case here (missing: %s)" %
              (path, missing))
    check(sorted(unsupported) == sorted(REFUSED),
          "the unsupported table and REFUSED list the same fields (%s)" %
          sorted(set(unsupported) ^ set(REFUSED)))
    check(sorted(informational) == sorted(INFORMATIONAL), "the informational fields match")
    return fields


def implemented(s, fields):
    for path, names in fields.items():
        a = Ask(s, path)
        for field in names:
            case = IMPLEMENTED.get(field)
            check(case is not None and case(a), "%s: '%s' changes the answer" % (path, field))


def unsupported(s):
    for path in (CHAT, COMPLETIONS):
        a = Ask(s, path)
        for field, (asks, neutral) in REFUSED.items():
            st, out = a.answer(**{field: asks})
            check(refused(st, out, field), "%s: '%s' %r is 400 naming it" % (path, field, asks))
            st, _ = a.answer(**{field: neutral})
            check(st == 200, "%s: '%s' at its neutral %r is served" % (path, field, neutral))


def informational(s):
    for path in (CHAT, COMPLETIONS):
        a = Ask(s, path)
        greedy = a.text()
        for field, value in INFORMATIONAL.items():
            check(a.text(**{field: value}) == greedy,
                  "%s: '%s' is served and changes nothing" % (path, field))


def unknown(s):
    chat, completion = Ask(s, CHAT), Ask(s, COMPLETIONS)
    for a, field, value in ((chat, "frobnicate", 1), (completion, "frobnicate", {}),
                            (completion, "messages", [{"role": "user", "content": "x"}]),
                            (chat, "prompt", "x"),
                            (chat, "verbosity", "low"), (chat, "cache_prompt", False)):
        st, out = a.answer(**{field: value})
        check(refused(st, out, field) and "rather than ignore" in out["error"]["message"],
              "%s: an unknown field '%s' is 400 naming it" % (a.path, field))
    st, _ = chat.answer(frobnicate=None)
    check(st == 200, "an unknown field that is null asks for nothing and is served")
    msg = [{"role": "user", "content": "Hello", "name": "ana"}]
    st, out = chat.answer(messages=msg)
    check(refused(st, out, "messages[0].name"), "a message's 'name' is 400 naming messages[0].name")
    for what, name in (("a 5,000-byte", "f" * 5000), ("a non-ASCII", "caf\u00e9"),
                       ("a quote-holding", "a'b")):
        st, out = chat.answer(**{name: 1})
        err = out.get("error", {}) if isinstance(out, dict) else {}
        check(st == 400 and err.get("param") is None and len(err.get("message", "")) < 300 and
              name not in err.get("message", ""), "%s field name is 400, not repeated" % what)


def main():
    fields = coverage()
    with Server(server_binary()) as s:
        implemented(s, fields)
        unsupported(s)
        informational(s)
        unknown(s)
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
