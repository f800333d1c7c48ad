"""The server on the jobs room's CPU and storage queues, end to end over
loopback on the tiny model:

- the model file was read on the model_load queue, and chat templating and
  tokenisation run on the interactive queue (their counts in the status
  JSON and in /metrics);
- POST /v1/hearth/documents: a document, as JSON or as a text/html body,
  parsed and chunked on the documents queue, its chunks summarised in the
  GPU's documents class, one combined answer; each bad input gets its
  status and an OpenAI-shaped JSON error;
- give-back: while chat requests queue for the GPU, the background queues
  drop to their floor (documents 1 core, library paused), and take their
  cores back once the house is quiet, as the status JSON and /metrics show.
"""

import json
import re
import sys
import threading
import time

from serve_harness import KEYS, Checks, Server, chat_body, server_binary, wait_for

checks = Checks("serve/jobs")

PARAGRAPH = ("The boiler needs a service before winter. The garden gate is broken and the "
             "school letter asks for a signed form by Friday.")
DOCUMENT = "\n\n".join(PARAGRAPH for _ in range(3))


def queue(status, name):
    return next(q for q in status["jobs"]["queues"] if q["name"] == name)


def metric(text, name, labels=""):
    m = re.search(r"^%s%s (\S+)$" % (re.escape(name), re.escape(labels)), text, re.M)
    return float(m.group(1)) if m else None


def check_error(s, what, expected, body, key=KEYS["dan"], headers=None, path="/v1/hearth/documents"):
    status, hdrs, parsed = s.request("POST", path, body, key=key, headers=headers)
    ok = status == expected and isinstance(parsed, dict) and "message" in parsed.get("error", {})
    checks.check(ok, "%s: %d with a JSON error (got %d %s)" % (what, expected, status, str(parsed)[:160]))
    return hdrs


def check_queues_at_start(s):
    st = s.status()
    names = [q["name"] for q in st["jobs"]["queues"]]
    checks.check(names == ["interactive", "documents", "library", "model_load"],
                 "status lists the job queues: %s" % names)
    checks.check(queue(st, "model_load")["ended"]["done"] == 1,
                 "the model was loaded by a job on the model_load queue")
    checks.check(st["jobs"]["worker_slots"] == 4, "four cores lent to jobs (--job_threads=4)")
    status, _, _ = s.request("POST", "/v1/chat/completions", chat_body(max_tokens=2), key=KEYS["ana"])
    st = s.status()
    checks.check(status == 200 and queue(st, "interactive")["ended"]["done"] >= 1,
                 "a chat's templating and tokenisation ran on the interactive queue")
    metrics = s.metrics()
    checks.check(metric(metrics, "hearth_jobs_ended_total", '{queue="model_load",outcome="done"}') == 1,
                 "/metrics has the job queues' families (model_load done 1)")


def check_documents(s):
    before = s.status()
    classes_before = {c["name"]: c["finished"] for c in before["classes"]}
    start = time.monotonic()
    status, hdrs, r = s.request("POST", "/v1/hearth/documents",
                                {"model": "tiny", "text": DOCUMENT, "chunk_tokens": 128, "max_tokens": 6},
                                key=KEYS["ana"])
    wall = time.monotonic() - start
    if not checks.check(status == 200 and isinstance(r, dict) and r.get("object") == "hearth.document",
                        "a JSON document is answered 200 in %.2f s (%s)" % (wall, str(r)[:200])):
        return
    chunks = r["chunks"]
    checks.check(len(chunks) >= 2, "the document was cut into %d chunks" % len(chunks))
    checks.check(r["work_class"] == "documents", "its chunks ran in the documents class (ana's key says chat)")
    checks.check(all(c["completion_tokens"] == 6 and c["finish_reason"] == "length" and c["summary"]
                     for c in chunks), "every chunk has its summary")
    checks.check([c["index"] for c in chunks] == list(range(len(chunks))), "chunks in order")
    checks.check(r["summary"] == "\n\n".join(c["summary"] for c in chunks),
                 "the combined summary joins the chunks' in order")
    checks.check(r["usage"]["completion_tokens"] == 6 * len(chunks) and
                 r["usage"]["prompt_tokens"] == sum(c["prompt_tokens"] for c in chunks),
                 "usage sums the chunks")
    checks.check(hdrs.get("x-hearth-request-id") == r["id"][len("doc-"):], "X-Hearth-Request-Id names it")
    after = s.status()
    checks.check(queue(after, "documents")["ended"]["done"] == queue(before, "documents")["ended"]["done"] + 1,
                 "its parsing and chunking ran on the documents queue")
    # The class figures come from the engine's snapshot, a few times a second.
    finished = wait_for(lambda: next(c["finished"] for c in s.status()["classes"] if c["name"] == "documents")
                        - classes_before["documents"] == len(chunks))
    checks.check(finished, "the scheduler's documents class finished %d requests" % len(chunks))

    status, _, r = s.request("POST", "/v1/hearth/documents?max_tokens=3&chunk_tokens=64",
                             "<html><script>var x = 1;</script><h1>Boiler</h1><p>Service &amp; check</p></html>",
                             key=KEYS["dan"], headers={"Content-Type": "text/html; charset=utf-8"})
    checks.check(status == 200 and len(r["chunks"]) == 1 and r["chunks"][0]["completion_tokens"] == 3,
                 "a text/html body with options in the query is answered (%s)" % str(r)[:160])


def check_document_errors(s):
    check_error(s, "no key", 401, {"text": "a"}, key=None)
    check_error(s, "malformed JSON", 400, "{not json", headers={"Content-Type": "application/json"})
    check_error(s, "no text", 400, {"model": "tiny"})
    check_error(s, "chunk_tokens out of range", 400, {"text": "a", "chunk_tokens": 1})
    check_error(s, "unknown field", 400, {"text": "a", "chunks": 3})
    check_error(s, "unknown model", 404, {"model": "gpt-9", "text": "a"})
    check_error(s, "unknown class header", 400, {"text": "a"}, headers={"X-Hearth-Class": "nope"})
    check_error(s, "a PDF body", 400, "%PDF-1.4", headers={"Content-Type": "application/pdf"})
    check_error(s, "an HTML body with no text", 400, "<script>only code</script>",
                headers={"Content-Type": "text/html"})
    big = " ".join("word%d" % i for i in range(2500))
    check_error(s, "more than 256 chunks", 413, {"text": big, "chunk_tokens": 16})
    check_error(s, "a chunk with its summary beyond the context", 413,
                {"text": big, "chunk_tokens": 8192, "max_tokens": 4096})
    # eve may have one request queued: a three-chunk document is refused
    # whole, and nothing of it is left behind.
    hdrs = check_error(s, "over the member's queue limit", 429,
                       {"text": DOCUMENT, "chunk_tokens": 64, "max_tokens": 2}, key=KEYS["eve"])
    checks.check("retry-after" in hdrs, "the 429 says when to retry")
    checks.check(wait_for(lambda: s.status()["live_requests"] == 0), "the refused document left nothing running")
    status, _, _ = s.request("GET", "/healthz")
    checks.check(status == 200, "the server is still healthy")


def check_give_back(s):
    st = s.status()
    checks.check(queue(st, "documents")["concurrency_limit"] == 3 and queue(st, "library")["concurrency_limit"] == 2
                 and st["jobs"]["interactive_pressure"] == 0,
                 "calm house: documents may use 3 cores, library 2, pressure 0")
    stop = threading.Event()

    def chat():
        while not stop.is_set():
            s.stream("/v1/chat/completions", chat_body(max_tokens=3000), key=KEYS["ana"],
                     on_event=lambda e, c: not stop.is_set())

    answer = {}
    threads = [threading.Thread(target=chat) for _ in range(10)]
    for t in threads:
        t.start()
    start = time.monotonic()
    peak = wait_for(lambda: (lambda st: st if st["jobs"]["interactive_pressure"] == 1 else None)(s.status()),
                    timeout=15)
    if checks.check(peak is not None, "ten chats queued for two GPU slots: interactive pressure 1 after %.2f s"
                    % (time.monotonic() - start)):
        checks.check(peak["jobs"]["demand"]["interactive_backlog"] >= 4,
                     "the engine reported a backlog of %d" % peak["jobs"]["demand"]["interactive_backlog"])
        checks.check(queue(peak, "documents")["concurrency_limit"] == 1,
                     "documents gave back to 1 core (%d)" % queue(peak, "documents")["concurrency_limit"])
        checks.check(queue(peak, "library")["concurrency_limit"] == 0, "library scans paused (limit 0)")
        checks.check(queue(peak, "interactive")["concurrency_limit"] == 4, "the interactive queue keeps its 4 cores")
        metrics = s.metrics()
        checks.check(metric(metrics, "hearth_jobs_concurrency_limit", '{queue="library"}') == 0 and
                     metric(metrics, "hearth_jobs_interactive_pressure") == 1,
                     "/metrics shows it: library limit 0, pressure 1")
        # A document posted at the peak: its parsing still gets the one
        # core documents keeps (its summary then waits for the GPU).
        parsed_before = queue(peak, "documents")["ended"]["done"]
        poster = threading.Thread(target=lambda: answer.update(status=s.request(
            "POST", "/v1/hearth/documents", {"text": PARAGRAPH, "max_tokens": 2}, key=KEYS["dan"],
            timeout=120)[0]))
        poster.start()
        parsed = wait_for(lambda: (lambda st: st if queue(st, "documents")["ended"]["done"] > parsed_before
                                   else None)(s.status()), timeout=10)
        checks.check(parsed is not None and parsed["jobs"]["interactive_pressure"] == 1,
                     "a document posted at the peak is parsed on the one core documents keeps")
        threads.append(poster)
    stop.set()
    stopped = time.monotonic()
    for t in threads:
        t.join()
    checks.check(answer.get("status") == 200, "and answered once the chats are gone")
    calm = wait_for(lambda: (lambda st: st if queue(st, "documents")["concurrency_limit"] == 3 else None)(s.status()),
                    timeout=15)
    checks.check(calm is not None and queue(calm, "library")["concurrency_limit"] == 2 and
                 calm["jobs"]["interactive_pressure"] == 0,
                 "the chats ended: the background queues took their cores back %.2f s after they were stopped"
                 % (time.monotonic() - stopped))


def main():
    binary = server_binary()
    with Server(binary, "--job_threads=4", "--n_seq_max=2", "--demand_backlog=4") as s:
        check_queues_at_start(s)
        check_documents(s)
        check_document_errors(s)
        check_give_back(s)
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
