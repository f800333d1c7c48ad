"""hearth-serve end to end over loopback, on the tiny GGUF model: four
members with their keys, streaming and whole answers, sampling, classes and
workflows, every bad input's status and JSON error, a disconnect that
cancels (and frees its KV), and SIGTERM draining in-flight requests."""

import json
import signal
import socket
import sys
import threading
import time

from serve_harness import KEYS, SCRAPE_KEY, Checks, Server, chat_body, server_binary, wait_for

checks = Checks("serve/api")
check = checks.check


def is_error(resp, status, code=None):
    st, headers, body = resp
    ok = st == status and isinstance(body, dict) and "error" in body and \
        isinstance(body["error"].get("message"), str) and "type" in body["error"]
    if code is not None:
        ok = ok and body["error"].get("code") == code
    return ok


def members_and_modes(s):
    for name in ("ana", "ben", "cleo", "dan"):
        st, _, body = s.request("POST", "/v1/chat/completions", chat_body(max_tokens=6), key=KEYS[name])
        check(st == 200 and body["object"] == "chat.completion" and
              body["choices"][0]["finish_reason"] == "length" and
              body["usage"]["completion_tokens"] == 6 and
              body["usage"]["total_tokens"] == body["usage"]["prompt_tokens"] + 6,
              "%s: whole chat answer with usage" % name)
        r = s.stream("/v1/chat/completions", chat_body(max_tokens=5,
                     stream_options={"include_usage": True}), key=KEYS[name])
        check(r["status"] == 200 and r["done"] and r["finish_reason"] == "length" and
              r["usage"] and r["usage"]["completion_tokens"] == 5 and
              r["events"][0]["choices"][0]["delta"].get("role") == "assistant",
              "%s: streamed chat with role, finish_reason, usage and [DONE]" % name)
    st, _, body = s.request("POST", "/v1/completions",
                            {"model": "tiny", "prompt": "Once", "max_tokens": 4}, key=KEYS["ana"])
    check(st == 200 and body["object"] == "text_completion" and "text" in body["choices"][0],
          "text completion")
    r = s.stream("/v1/completions", {"model": "tiny", "prompt": "Once", "max_tokens": 4}, key=KEYS["ana"])
    check(r["done"] and r["finish_reason"] == "length", "streamed text completion")
    st, _, body = s.request("GET", "/v1/models", key=KEYS["ben"])
    check(st == 200 and [m["id"] for m in body["data"]] == ["tiny", "tiny-voice"], "models and aliases")


def sampling(s):
    def answer(**params):
        return s.request("POST", "/v1/completions",
                         dict({"model": "tiny", "prompt": "The house", "max_tokens": 12}, **params),
                         key=KEYS["ana"])[2]["choices"][0]["text"]
    greedy = answer(temperature=0)
    check(greedy == answer(temperature=0), "temperature 0 is deterministic")
    a, b = answer(temperature=1.0, seed=7), answer(temperature=1.0, seed=7)
    check(a == b, "same seed, same text")
    others = {answer(temperature=1.5, top_p=0.95, seed=k) for k in range(4)}
    check(len(others) > 1, "different seeds give different text")
    # A stop string taken from the greedy text ends the answer before it (an
    # ASCII character: the random model's bytes are not always UTF-8).
    stop = next((ch for ch in greedy[1:] if 32 <= ord(ch) < 127), None)
    if stop:
        st, _, body = s.request("POST", "/v1/completions",
                                {"model": "tiny", "prompt": "The house", "max_tokens": 12,
                                 "temperature": 0, "stop": [stop]}, key=KEYS["ana"])
        text = body["choices"][0]["text"]
        check(st == 200 and body["choices"][0]["finish_reason"] == "stop" and stop not in text and
              greedy.startswith(text), "stop string ends the answer (%r)" % stop)
        r = s.stream("/v1/completions", {"model": "tiny", "prompt": "The house", "max_tokens": 12,
                                         "temperature": 0, "stop": stop}, key=KEYS["ana"])
        check(r["finish_reason"] == "stop" and r["text"] == text, "streamed stop string, same text")


def classes_and_workflows(s):
    def ended(cls):
        return next(c for c in s.status()["classes"] if c["name"] == cls)["finished"]
    time.sleep(0.6)  # the status is a snapshot taken every 250 ms
    before = {c: ended(c) for c in ("voice", "agent", "maintenance")}
    s.request("POST", "/v1/chat/completions", chat_body(max_tokens=2, model="tiny-voice"), key=KEYS["ben"])
    s.request("POST", "/v1/chat/completions", chat_body(max_tokens=2), key=KEYS["ana"],
              headers={"X-Hearth-Class": "maintenance"})
    st, h, parent = s.request("POST", "/v1/chat/completions", chat_body(max_tokens=2), key=KEYS["cleo"])
    st2, _, child = s.request("POST", "/v1/chat/completions", chat_body(max_tokens=2), key=KEYS["cleo"],
                              headers={"X-Hearth-Parent": parent["id"]})
    check(st2 == 200, "an agent call naming its parent is served")
    check(wait_for(lambda: ended("voice") == before["voice"] + 1 and
                   ended("maintenance") == before["maintenance"] + 1 and
                   ended("agent") == before["agent"] + 2),
          "model alias, X-Hearth-Class and key default choose the class (%s -> %s)" %
          (before, {c: ended(c) for c in before}))
    foreign = s.request("POST", "/v1/chat/completions", chat_body(), key=KEYS["ana"],
                        headers={"X-Hearth-Parent": parent["id"]})
    check(is_error(foreign, 400) and "cleo" not in foreign[2]["error"]["message"],
          "a parent of another member is 400, and the error does not name its owner (%s)" %
          foreign[2]["error"]["message"])
    never = s.request("POST", "/v1/chat/completions", chat_body(), key=KEYS["ana"],
                      headers={"X-Hearth-Parent": "chatcmpl-0123456789abcdef01234567"})
    check(is_error(never, 400) and never[2]["error"]["message"].replace(
        "chatcmpl-0123456789abcdef01234567", parent["id"]) == foreign[2]["error"]["message"],
          "another member's request id reads exactly as an id never issued")
    check(is_error(s.request("POST", "/v1/chat/completions", chat_body(), key=KEYS["ana"],
                             headers={"X-Hearth-Class": "nope"}), 400), "unknown class is 400")


def bad_inputs(s):
    url = "/v1/chat/completions"
    check(is_error(s.request("POST", url, "{not json", key=KEYS["ana"]), 400), "malformed JSON is 400")
    check(is_error(s.request("POST", url, "[1,2]", key=KEYS["ana"]), 400), "a non-object body is 400")
    check(is_error(s.request("POST", url, {"model": "tiny"}, key=KEYS["ana"]), 400), "no messages is 400")
    check(is_error(s.request("POST", url, chat_body(temperature=9), key=KEYS["ana"]), 400),
          "temperature out of range is 400")
    check(is_error(s.request("POST", url, chat_body(max_tokens=-1), key=KEYS["ana"]), 400),
          "negative max_tokens is 400")
    check(is_error(s.request("POST", url, chat_body(n=9), key=KEYS["ana"]), 400), "n > 8 is 400")
    check(is_error(s.request("POST", url, chat_body()), 401, "invalid_api_key"), "no key is 401")
    check(is_error(s.request("POST", url, chat_body(), key="sk-nobody"), 401, "invalid_api_key"),
          "unknown key is 401")
    check(is_error(s.request("GET", "/v1/models", key="sk-nobody"), 401), "models with a bad key is 401")
    check(is_error(s.request("POST", url, chat_body(model="gpt-9"), key=KEYS["ana"]), 404, "model_not_found"),
          "unknown model is 404")
    check(is_error(s.request("POST", url, chat_body(content="x" * 9000), key=KEYS["ana"]), 413,
                   "context_length_exceeded"), "a prompt over the context is 413")
    check(is_error(s.request("POST", url, chat_body(max_tokens=9000), key=KEYS["ana"]), 413,
                   "context_length_exceeded"), "prompt + max_tokens over the context is 413")
    check(is_error(s.request("POST", url, "x" * (2 << 20), key=KEYS["ana"]), 413), "a huge body is 413")
    check(is_error(s.request("GET", "/nowhere", key=KEYS["ana"]), 404), "an unknown path is a JSON 404")
    # Quota: dan may use 5,000 tokens an hour (prompt + max_tokens, charged
    # at intake and refunded to what was generated).
    st, h, body = s.request("POST", "/v1/completions",
                            {"model": "tiny", "prompt": "x", "max_tokens": 100}, key=KEYS["dan"])
    check(st == 200, "dan within his quota")
    st, h, body = s.request("POST", "/v1/completions",
                            {"model": "tiny", "prompt": "x", "max_tokens": 6000}, key=KEYS["dan"])
    check(is_error((st, h, body), 429, "rate_limit_exceeded") and int(h.get("retry-after", 0)) > 1 and
          "quota" in body["error"]["message"], "over the token quota is 429 with Retry-After to the window")
    # Queue limit: eve may have one unfinished request.
    holder = {}
    t = threading.Thread(target=lambda: holder.update(r=s.stream(url, chat_body(max_tokens=3000),
                                                                   key=KEYS["eve"])))
    t.start()
    wait_for(lambda: any(m["name"] == "eve" and m["running"] + m["waiting"] > 0
                         for m in s.status()["members"]))
    resp = s.request("POST", url, chat_body(max_tokens=4), key=KEYS["eve"])
    check(is_error(resp, 429) and resp[1].get("retry-after") == "1", "over the queue limit is 429, Retry-After: 1")
    t.join()
    check(holder["r"]["done"], "the request holding the queue finishes")


def slow_and_broken_clients(s):
    # A client that sends half a request and stalls, and one that sends junk.
    stall = socket.create_connection(("127.0.0.1", s.port))
    stall.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
    junk = socket.create_connection(("127.0.0.1", s.port))
    junk.sendall(b"\x00\xff garbage \r\n\r\n")
    junk.close()
    st, _, _ = s.request("GET", "/healthz")
    check(st == 200, "the server answers while a client stalls and another sent junk")
    stall.close()


def disconnect_cancels(s):
    def chat_class():
        return next(c for c in s.status()["classes"] if c["name"] == "chat")
    time.sleep(0.6)  # the status is a snapshot taken every 250 ms
    cancelled_before = chat_class()["cancelled"]
    seen = []

    def stop_after_three(event, conn):
        seen.append(event)
        if len(seen) == 3:
            conn.sock.shutdown(socket.SHUT_RDWR)
            conn.close()
            return False
        return True
    r = s.stream("/v1/chat/completions", chat_body(max_tokens=7000), key=KEYS["ana"], on_event=stop_after_three)
    check(len(seen) == 3 and not r["done"], "client left after three events")
    # Every condition read off one snapshot: the status is up to 250 ms old,
    # so of two reads the first can predate the whole request (no blocks, no
    # disconnect) while the second shows its cancellation.
    def ended(st):
        chat = next(c for c in st["classes"] if c["name"] == "chat")
        return st if chat["cancelled"] == cancelled_before + 1 and st["kv"]["used_blocks"] == 0 else None
    status = wait_for(lambda: ended(s.status()))
    check(status is not None, "the scheduler shows the request cancelled and its KV blocks freed")
    check(status is not None and status["disconnect_cancels"] >= 1, "counted as a disconnect")
    metrics = s.metrics()
    check('hearth_requests_ended_total{class="chat",outcome="cancelled"} %d' % (cancelled_before + 1) in metrics,
          "/metrics counts the cancellation")
    # A client of a whole (non-streamed) answer that leaves is noticed too.
    conn = s.connect()
    conn.request("POST", "/v1/chat/completions", body=json.dumps(chat_body(max_tokens=7000)),
                 headers={"Authorization": "Bearer sk-ana", "Content-Type": "application/json"})
    time.sleep(0.5)
    conn.sock.shutdown(socket.SHUT_RDWR)
    conn.close()
    check(wait_for(lambda: chat_class()["cancelled"] == cancelled_before + 2 and
                   s.status()["kv"]["used_blocks"] == 0, timeout=15),
          "a non-streamed request whose client left is cancelled")


def metrics_and_health(s):
    st, h, text = s.request("GET", "/metrics", key=SCRAPE_KEY)
    check(st == 200 and "hearth_ttft_seconds_bucket" in text and "vllm:num_requests_running" in text
          and "hearth_user_requests_arrived_total" in text, "/metrics is Prometheus text with Hearth's families")
    st, _, body = s.request("GET", "/healthz")
    check(st == 200 and body == {"status": "ok"}, "/healthz ok")
    st = s.status()
    check({m["name"] for m in st["members"]} == {"ana", "ben", "cleo", "dan", "eve"} and
          any(c["name"] == "voice" and c["slo_ttft_s"] == 0.5 for c in st["classes"]),
          "status lists members and classes with SLOs")


def sigterm_drains(binary):
    with Server(binary) as s:
        results = []
        threads = [threading.Thread(target=lambda: results.append(
            s.stream("/v1/chat/completions", chat_body(max_tokens=300), key=KEYS["ana"])))
            for _ in range(3)]
        for t in threads:
            t.start()
        wait_for(lambda: s.status()["live_requests"] == 3)
        s.proc.send_signal(signal.SIGTERM)
        time.sleep(0.2)
        try:
            late = s.request("POST", "/v1/chat/completions", chat_body(max_tokens=2), key=KEYS["ana"],
                             timeout=5)
            check(late[0] == 503, "after SIGTERM new requests get 503")
        except OSError:
            check(True, "after SIGTERM new requests are refused")
        for t in threads:
            t.join()
        check(len(results) == 3 and all(r["done"] and r["finish_reason"] == "length" and
                                         r["usage"] is None and len(r["text"]) > 0 for r in results),
              "in-flight streams finish cleanly after SIGTERM")
        check(s.proc.wait(timeout=30) == 0, "the server exits 0 after draining")


def main():
    binary = server_binary()
    with Server(binary) as s:
        for part in (members_and_modes, sampling, classes_and_workflows, bad_inputs,
                     slow_and_broken_clients, disconnect_cancels, metrics_and_health):
            print("--", part.__name__, flush=True)
            try:
                part(s)
            except Exception as e:  # a crash of the test is a failed check, and the log helps
                check(False, "%s raised %r; server log:\n%s" % (part.__name__, e, s.stderr()))
        check(s.proc.poll() is None, "the server is still up")
    print("-- sigterm_drains", flush=True)
    sigterm_drains(binary)
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
