"""Prefix caching in hearth-serve, scoped per member, end to end on the tiny
model, read from each answer's usage.prompt_tokens_details.cached_tokens:

- a chat conversation's later turns reuse the KV of its own earlier turns
  (the figures: cached / prompt tokens per turn);
- the chat template's fixed beginning is shared by every member;
- another member sending the very same conversation reuses nothing but that
  beginning, and a completion prompt (no template) nothing at all;
- answers are the same with prefix caching on and off (greedy), streamed
  answers report the cached tokens too, and with --prefix_cache_sequences=0
  nothing is cached.
"""

import sys

from serve_harness import KEYS, Checks, Server, server_binary

checks = Checks("serve/prefix_cache")

QUESTIONS = ["What should we cook tonight for four people?",
             "And what about a dessert without nuts?",
             "Which of those can be made ahead on Sunday?",
             "Write the shopping list, please."]


def chat(s, key, messages, stream=False):
    body = {"model": "tiny", "messages": messages, "temperature": 0, "max_tokens": 12}
    if stream:
        body["stream_options"] = {"include_usage": True}
        out = s.stream("/v1/chat/completions", body, key=key)
        return out["status"], out["text"], out["usage"] or {}
    status, _, parsed = s.request("POST", "/v1/chat/completions", body, key=key)
    if status != 200:
        return status, None, {}
    return status, parsed["choices"][0]["message"]["content"], parsed["usage"]


def cached(usage):
    return usage.get("prompt_tokens_details", {}).get("cached_tokens", -1)


def conversation(s, key, answers=None):
    """Four turns; each resends the history. Returns [(prompt, cached, text)]."""
    messages, turns = [], []
    for i, q in enumerate(QUESTIONS):
        messages.append({"role": "user", "content": q})
        status, text, usage = chat(s, key, messages)
        if not checks.check(status == 200, "turn %d answered (%s)" % (i + 1, status)):
            return turns
        turns.append((usage["prompt_tokens"], cached(usage), text))
        messages.append({"role": "assistant", "content": answers[i] if answers else text})
    return turns


def history(turns, upto):
    messages = []
    for q, (_, _, text) in zip(QUESTIONS[:upto], turns[:upto]):
        messages += [{"role": "user", "content": q}, {"role": "assistant", "content": text}]
    return messages + [{"role": "user", "content": QUESTIONS[upto]}]


def main():
    binary = server_binary()
    block = 4  # the tiny model's plain transcript begins with 7 template tokens
    with Server(binary, "--block_size=%d" % block) as s:
        ana = conversation(s, KEYS["ana"])
        reused = sum(c for _, c, _ in ana[1:])
        prompt = sum(p for p, _, _ in ana[1:])
        for i, (p, c, _) in enumerate(ana):
            print("     ana turn %d: %d of %d prompt tokens cached" % (i + 1, c, p))
        print("     ana turns 2-4: %d of %d prompt tokens (%.0f%%) came from the cache"
              % (reused, prompt, 100.0 * reused / max(1, prompt)))
        for i in range(1, len(ana)):
            # The earlier turn's prompt is a prefix of this one's: at least
            # its whole blocks are found.
            floor = ana[i - 1][0] // block * block
            checks.check(ana[i][1] >= floor,
                         "ana's turn %d reuses her turn %d (%d cached >= %d)"
                         % (i + 1, i, ana[i][1], floor))
        checks.check(ana[0][1] == 0, "ana's first turn finds nothing: she is the first to chat")
        # Cleo's first chat: the template's beginning, which Ana's left cached.
        other = chat(s, KEYS["cleo"], [{"role": "user", "content": "Is the boiler serviced?"}])
        template = cached(other[2])
        checks.check(0 < template < 8,
                     "cleo's first chat shares the template's beginning with ana's (%d tokens, "
                     "%d-token blocks)" % (template, block))
        # Ben sends Ana's whole conversation, word for word: only the template.
        same = chat(s, KEYS["ben"], history(ana, 3))
        checks.check(same[0] == 200 and cached(same[2]) == template,
                     "ben's copy of ana's fourth turn reuses only the template (%d cached of %d, "
                     "ana's own: %d)" % (cached(same[2]), same[2].get("prompt_tokens", -1),
                                         ana[3][1]))
        checks.check(same[1] == ana[3][2], "and gets the same answer ana got")
        # Ana again: all of her own fourth turn but its last position.
        again = chat(s, KEYS["ana"], history(ana, 3))
        checks.check(cached(again[2]) == again[2]["prompt_tokens"] - 1,
                     "ana repeating her fourth turn reuses all but its last token (%d of %d)"
                     % (cached(again[2]), again[2]["prompt_tokens"]))
        streamed = chat(s, KEYS["ana"], history(ana, 3), stream=True)
        checks.check(streamed[0] == 200 and cached(streamed[2]) == again[2]["prompt_tokens"] - 1,
                     "a streamed answer reports its cached tokens in the usage chunk (%d)"
                     % cached(streamed[2]))
        # A completion prompt has no template: nothing public to share.
        status, _, parsed = s.request("POST", "/v1/completions",
                                      {"model": "tiny", "prompt": "user: " + QUESTIONS[0],
                                       "max_tokens": 4, "temperature": 0}, key=KEYS["ben"])
        checks.check(status == 200 and cached(parsed["usage"]) == 0,
                     "ben's completion prompt finds nothing (%s)" % parsed.get("usage"))

    with Server(binary, "--block_size=%d" % block, "--prefix_cache_sequences=0") as s:
        off = conversation(s, KEYS["ana"], answers=[t for _, _, t in ana])
        checks.check(all(c == 0 for _, c, _ in off), "with --prefix_cache_sequences=0 nothing is cached")
        checks.check([t for _, _, t in off] == [t for _, _, t in ana],
                     "and every answer is the one prefix caching gave")

    # The default block size (16): the conversation still reuses its turns.
    with Server(binary) as s:
        turns = conversation(s, KEYS["ana"])
        reused = sum(c for _, c, _ in turns[1:])
        prompt = sum(p for p, _, _ in turns[1:])
        print("     block 16: ana turns 2-4: %d of %d prompt tokens (%.0f%%) from the cache"
              % (reused, prompt, 100.0 * reused / max(1, prompt)))
        checks.check(reused >= prompt // 2, "with 16-token blocks too, most of turns 2-4 is reused")
        checks.check([t for _, _, t in turns] == [t for _, _, t in ana],
                     "with the same answers")
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
