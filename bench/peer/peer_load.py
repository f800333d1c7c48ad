#!/usr/bin/env python3
"""One household's load against llama-server and hearth-serve, in one run (issue 29).

Started by bench/peer/run_peer.sh, which builds nothing and checks the programs first. Each
server is started in turn on the same GGUF, with the shared settings only (context, 8
sequences, one compute thread), a fresh process per scenario. One load client plays the
household:

  member A (documents)  40 completions of 1,500 prompt tokens, 128 out, all at t = 0;
  member B (voice)      20 requests of 30 tokens, 16 out, one every 0.5 s from 1 s;
  member C (chat)       20 requests of 200 tokens, 64 out, one a second from 1 s
(FULL_LOAD; --quick sends 8, 6 and 4).

Scenarios: "flood" (A + B + C), "quiet" (B + C), "flood_only" (A). Every request is a
streamed /v1/completions: the same prompt bytes reach both servers untemplated, and the
model's byte-level vocabulary makes a prompt of N ASCII bytes N tokens. Each request bans the
non-ASCII bytes and the control tokens (logit_bias -100), so every token is a whole character
and no answer ends early: llama-server holds back an incomplete UTF-8 character, which would
add decode steps to its time to first token that hearth-serve does not pay.

The servers take turns within a run (llama-server, llama-server -kvu, hearth household,
hearth FIFO, then the next run), so ratios compare servers under similar machine load.
Standard library only.
"""

import argparse
import http.client
import json
import math
import os
import random
import re
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time

SERVERS = ("llama", "llama_kvu", "household", "fifo")
SERVER_LABELS = {"llama": "llama-server", "llama_kvu": "llama-server -kvu",
                 "household": "hearth household", "fifo": "hearth FIFO"}
SCENARIOS = ("flood", "quiet", "flood_only")
MODEL_NAME = "peer"
KEYS = {"documents": "sk-peer-a", "voice": "sk-peer-b", "chat": "sk-peer-c"}
HOUSEHOLD_TOML = """# Written by bench/peer/peer_load.py: three members, one key each.
[[member]]
name = "a"

[[member]]
name = "b"

[[member]]
name = "c"

[[key]]
key = "sk-peer-a"
member = "a"
default_class = "documents"

[[key]]
key = "sk-peer-b"
member = "b"
default_class = "voice"

[[key]]
key = "sk-peer-c"
member = "c"
default_class = "chat"
"""

# (count, prompt tokens, max tokens, first send s, gap s) per class; --quick shrinks counts.
FULL_LOAD = {"documents": (40, 1500, 128, 0.0, 0.0),
             "voice": (20, 30, 16, 1.0, 0.5),
             "chat": (20, 200, 64, 1.0, 1.0)}
QUICK_LOAD = {"documents": (8, 1500, 128, 0.0, 0.0),
              "voice": (6, 30, 16, 1.0, 0.5),
              "chat": (4, 200, 64, 1.0, 1.0)}
SCENARIO_CLASSES = {"flood": ("documents", "voice", "chat"), "quiet": ("voice", "chat"),
                    "flood_only": ("documents",)}
# Byte ids 128..255 and BOS/EOS (256, 257) of the self-written model's vocabulary.
BANNED = {str(t): -100 for t in range(128, 258)}
CONTEXT = 16384
SEQUENCES = 8
REQUEST_TIMEOUT_S = 600
WORDS = ("kitchen", "invoice", "garden", "school", "letter", "boiler", "receipt", "recipe",
         "light", "music", "timer", "weather", "calendar", "shopping", "laundry", "homework")


def prompt_text(cls, index, tokens):
    """`tokens` ASCII bytes, distinct per request from the first word on, so that no
    request finds another's prefix cached."""
    rng = random.Random("%s-%d" % (cls, index))
    words = ["%s%d" % (cls[0], index)]
    while sum(len(w) + 1 for w in words) < tokens:
        words.append(rng.choice(WORDS))
    return " ".join(words)[:tokens]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def proc_status_kib(pid, field):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def mapped_libraries(pid):
    """The llama.cpp libraries the process has mapped (which libllama, which CPU backend)."""
    found = set()
    try:
        with open("/proc/%d/maps" % pid) as f:
            for line in f:
                path = line.split()[-1]
                if re.search(r"lib(llama|ggml)[^/]*\.so", path):
                    found.add(path)
    except OSError:
        pass
    return sorted(found)


class ServerProcess:
    """One server, started for one scenario."""

    def __init__(self, name, args, log_path):
        self.name = name
        self.args = args
        self.log_path = log_path
        self.proc = None
        self.port = None

    def start(self):
        self.log = open(self.log_path, "w")
        if self.name.startswith("llama"):
            self.port = free_port()
            argv = [self.args.llama_server, "-m", self.args.model, "-a", MODEL_NAME,
                    "-c", str(CONTEXT), "-np", str(SEQUENCES), "-t", "1", "-tb", "1",
                    "--host", "127.0.0.1", "--port", str(self.port)]
            if self.name == "llama_kvu":
                argv.append("-kvu")
            env = dict(os.environ)
            # The prebuilt libllama (LD_LIBRARY_PATH is searched before the program's
            # RUNPATH); ggml looks for its CPU backends in the working directory.
            env["LD_LIBRARY_PATH"] = self.args.llama_lib + ":" + env.get("LD_LIBRARY_PATH", "")
            self.proc = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT,
                                         cwd=self.args.backend_dir, env=env)
        else:
            argv = [self.args.hearth_serve, "--model=" + self.args.model,
                    "--model_name=" + MODEL_NAME, "--household=" + self.args.household,
                    "--policy=" + self.name, "--n_ctx=%d" % CONTEXT,
                    "--n_seq_max=%d" % SEQUENCES, "--threads=1", "--port=0",
                    # One client address holds every member's connections here: the
                    # README's advice for clients behind one proxy.
                    "--max_connections_per_client=256"]
            self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=self.log, text=True)
            line = self.proc.stdout.readline()
            self.log.write(line)
            m = re.search(r"listening on http://[^:]+:(\d+)", line)
            if not m:
                self.stop()
                raise RuntimeError("hearth-serve did not start: %r (log %s)" % (line, self.log_path))
            self.port = int(m.group(1))
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("%s exited with %s (log %s)" % (self.name, self.proc.returncode,
                                                                   self.log_path))
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
                conn.request("GET", "/health")
                ok = conn.getresponse().status == 200
                conn.close()
                if ok:
                    return self
            except OSError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError("%s not healthy within 120 s (log %s)" % (self.name, self.log_path))

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def stream_one(port, cls, index, load, t0, out, lock):
    count, tokens, max_tokens, first, gap = load[cls]
    send_at = t0 + first + gap * index
    time.sleep(max(0.0, send_at - time.monotonic()))
    body = {"model": MODEL_NAME, "prompt": prompt_text(cls, index, tokens), "max_tokens": max_tokens,
            "temperature": 0, "logit_bias": BANNED, "stream": True,
            "stream_options": {"include_usage": True}}
    rec = dict(cls=cls, index=index, status=None, ttft_s=None, end_s=None, tokens=0,
               usage_tokens=None, done=False, error=None)
    start = time.monotonic()
    rec["sent_s"] = start - t0
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=REQUEST_TIMEOUT_S)
        conn.request("POST", "/v1/completions", body=json.dumps(body),
                     headers={"Content-Type": "application/json",
                              "Authorization": "Bearer " + KEYS[cls]})
        resp = conn.getresponse()
        rec["status"] = resp.status
        if resp.status != 200:
            rec["error"] = resp.read()[:300].decode("utf-8", "replace")
        else:
            while True:
                line = resp.readline()
                if not line:
                    break
                line = line.decode("utf-8", "replace").strip()
                if not line.startswith("data: "):
                    continue
                payload = line[len("data: "):]
                if payload == "[DONE]":
                    rec["done"] = True
                    break
                event = json.loads(payload)
                if "error" in event:
                    rec["error"] = json.dumps(event)[:300]
                    continue
                if event.get("usage"):
                    rec["usage_tokens"] = event["usage"].get("completion_tokens")
                for choice in event.get("choices", []):
                    if choice.get("text"):
                        if rec["ttft_s"] is None:
                            rec["ttft_s"] = time.monotonic() - start
                        rec["tokens"] += 1
        conn.close()
    except Exception as e:  # noqa: BLE001 - a timeout or reset is a failure, recorded
        rec["error"] = repr(e)[:300]
    rec["end_s"] = time.monotonic() - t0
    rec["failed"] = bool(rec["status"] != 200 or rec["error"] or not rec["done"]
                         or rec["ttft_s"] is None)
    with lock:
        out.append(rec)


def run_scenario(server, scenario, load):
    records, lock, threads = [], threading.Lock(), []
    t0 = time.monotonic() + 0.2
    for cls in SCENARIO_CLASSES[scenario]:
        for i in range(load[cls][0]):
            t = threading.Thread(target=stream_one, args=(server.port, cls, i, load, t0, records, lock))
            t.start()
            threads.append(t)
    for t in threads:
        t.join()
    return records


def percentile(values, q):
    values = sorted(values)
    if not values:
        return float("nan")
    k = (len(values) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(values) - 1)
    if k == lo or values[hi] == values[lo]:
        return values[lo]
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


def summarise(records):
    out = {"failures": sum(r["failed"] for r in records), "requests": len(records)}
    for cls in ("voice", "chat", "documents"):
        rs = [r for r in records if r["cls"] == cls]
        if rs:
            # A failed request counts as an infinite wait, not as a missing sample.
            ttfts = [r["ttft_s"] if not r["failed"] else math.inf for r in rs]
            out[cls + "_p90_ttft_s"] = percentile(ttfts, 0.9)
            out[cls + "_p50_ttft_s"] = percentile(ttfts, 0.5)
    tokens = sum((r["usage_tokens"] if r["usage_tokens"] is not None else r["tokens"])
                 for r in records if not r["failed"])
    span = max(r["end_s"] for r in records) - min(r["sent_s"] for r in records)
    out["output_tokens"] = tokens
    out["wall_s"] = span
    out["output_tok_s"] = tokens / span if span > 0 else float("nan")
    return out


def finite(x):
    return x if isinstance(x, (int, float)) and math.isfinite(x) else None


def measure(args):
    load = QUICK_LOAD if args.quick else FULL_LOAD
    os.makedirs(os.path.join(args.out, "logs"), exist_ok=True)
    results = {"load": load, "servers": {}, "libraries": {}, "loadavg": [], "runs": args.runs}
    results["loadavg"].append(os.getloadavg())
    for run in range(args.runs):
        for name in args.servers:
            for scenario in SCENARIOS:
                log = os.path.join(args.out, "logs", "%d-%s-%s.log" % (run, name, scenario))
                server = ServerProcess(name, args, log).start()
                try:
                    records = run_scenario(server, scenario, load)
                    hwm = proc_status_kib(server.proc.pid, "VmHWM")
                    results["libraries"][name] = mapped_libraries(server.proc.pid)
                finally:
                    server.stop()
                summary = summarise(records)
                summary["vmhwm_kib"] = hwm
                results["servers"].setdefault(name, {}).setdefault(scenario, []).append(summary)
                with open(os.path.join(args.out, "%d-%s-%s.json" % (run, name, scenario)), "w") as f:
                    json.dump(dict(summary=summary, records=records), f, indent=1, default=finite)
                print("run %d %-9s %-10s failures %d/%d  voice p90 %s  chat p90 %s  tok/s %.1f  "
                      "VmHWM %s MB" % (run + 1, name, scenario, summary["failures"],
                                       summary["requests"], fmt_s(summary.get("voice_p90_ttft_s")),
                                       fmt_s(summary.get("chat_p90_ttft_s")),
                                       summary["output_tok_s"], mb(hwm)), flush=True)
        results["loadavg"].append(os.getloadavg())
    return results


def fmt_s(x):
    if x is None:
        return "-"
    if not math.isfinite(x):
        return "inf"
    return "%.2f s" % x if x < 10 else "%.1f s" % x


def mb(kib):
    return "-" if kib is None else "%.0f" % (kib * 1024 / 1e6)


# Rows: label, scenario, per-run value, formatter.
ROWS = (
    ("voice p90 TTFT, with the flood", "flood", lambda s: s["voice_p90_ttft_s"], fmt_s),
    ("voice p90 TTFT, without", "quiet", lambda s: s["voice_p90_ttft_s"], fmt_s),
    ("chat p90 TTFT, with the flood", "flood", lambda s: s["chat_p90_ttft_s"], fmt_s),
    ("chat p90 TTFT, without", "quiet", lambda s: s["chat_p90_ttft_s"], fmt_s),
    ("documents p90 TTFT, flood only", "flood_only", lambda s: s["documents_p90_ttft_s"], fmt_s),
    ("output tok/s, flood only", "flood_only", lambda s: s["output_tok_s"], lambda x: "%.0f" % x),
)


def median(xs):
    xs = [x for x in xs if x is not None and not math.isnan(x)]
    return statistics.median(xs) if xs else float("nan")


def cell(values, fmt, runs):
    m = median(values)
    text = fmt(m)
    if runs > 1 and all(math.isfinite(v) for v in values):
        text += " (%s–%s)" % (fmt(min(values)).replace(" s", ""), fmt(max(values)))
    return text


def ratio_cell(num, den):
    # Per-run ratios: each run's servers ran back to back, under similar machine load.
    rs = [a / b for a, b in zip(num, den) if b and math.isfinite(a) and math.isfinite(b)]
    return "%.2f" % median(rs) if rs else "-"


def table(results):
    servers = [s for s in SERVERS if s in results["servers"]]
    has = lambda s: s in results["servers"]  # noqa: E731
    runs = results["runs"]
    head = ["", *(SERVER_LABELS[s] for s in servers)]
    ratio_of = [s for s in ("household", "fifo") if has(s)] if has("llama") else []
    head += ["%s / llama-server" % SERVER_LABELS[s].replace("hearth ", "") for s in ratio_of]
    lines = ["| " + " | ".join(head) + " |", "|---" + "|---:" * (len(head) - 1) + "|"]
    per = lambda s, scen, f: [f(x) for x in results["servers"][s][scen]]  # noqa: E731
    for label, scen, f, fmt in ROWS:
        row = [label] + [cell(per(s, scen, f), fmt, runs) for s in servers]
        row += [ratio_cell(per(s, scen, f), per("llama", scen, f)) for s in ratio_of]
        lines.append("| " + " | ".join(row) + " |")
    fails = {s: sum(x["failures"] for scen in SCENARIOS for x in results["servers"][s][scen])
             for s in servers}
    reqs = {s: sum(x["requests"] for scen in SCENARIOS for x in results["servers"][s][scen])
            for s in servers}
    lines.append("| failures (all scenarios and runs) | " +
                 " | ".join("%d of %d" % (fails[s], reqs[s]) for s in servers) +
                 " |" + " – |" * len(ratio_of))
    peak = lambda s: [max(results["servers"][s][scen][r]["vmhwm_kib"] or 0 for scen in SCENARIOS) / 1024  # noqa: E731
                      for r in range(runs)]
    row = ["peak RSS (VmHWM), MiB"] + [cell(peak(s), lambda x: "%.0f" % x, runs) for s in servers]
    row += [ratio_cell(peak(s), peak("llama")) for s in ratio_of]
    lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


SECTION = "## Peer: hearth-serve vs llama-server (issue 29)"
BEGIN, END = "<!-- peer_load.py: begin -->", "<!-- peer_load.py: end -->"


def library_note(results, backend_dir):
    prebuilt = os.path.realpath(backend_dir)
    notes = []
    for name in ("llama", "household"):
        libs = results["libraries"].get(name)
        if not libs:
            continue
        ours = [os.path.basename(l) for l in libs if os.path.dirname(os.path.realpath(l)) == prebuilt]
        other = [os.path.relpath(l, results["repo"]) for l in libs
                 if os.path.dirname(os.path.realpath(l)) != prebuilt]
        text = "%s ran on %s of `.deps/llama_cpp/lib`" % (
            SERVER_LABELS[name], ", ".join("`%s`" % l for l in ours) or "nothing")
        if other:
            text += " and the built %s" % ", ".join("`%s`" % os.path.basename(l) for l in other)
        notes.append(text)
    return "; ".join(notes)


def section_body(results, args):
    load = results["load"]
    la = results["loadavg"]
    lines = [
        BEGIN,
        "`%s` at %s, %s UTC; %d run(s). Load average (1 min) %s over the runs: the machine "
        "was shared with other builds, so absolute times and tok/s are noisy; the servers took "
        "turns within each run (%s), and each ratio is the median of the per-run ratios."
        % (args.command, args.commit, results["date"],
           results["runs"], " → ".join("%.1f" % x[0] for x in la),
           ", ".join(SERVER_LABELS[s] for s in args.servers)),
        "",
        "- Model: %s, written by the project's writer (`WriteTinyLlamaGguf`, through "
        "`hearth_llama_overhead`). Context %d, %d sequences, 1 compute thread each; every "
        "other setting is each server's default." % (args.model_desc, CONTEXT, SEQUENCES),
        "- Load (one client, streamed `/v1/completions`, greedy, non-ASCII bytes and BOS/EOS "
        "banned so every answer is exactly `max_tokens` whole characters): member A floods "
        "%d documents of %d tokens (%d out) at once; member B sends %d voice requests of %d "
        "tokens (%d out), one every %.1f s; member C %d chats of %d tokens (%d out), one every "
        "%.1f s; B and C start 1 s after A. Scenarios: with the flood (A+B+C), without (B+C), "
        "flood only (A)." % (load["documents"][0], load["documents"][1], load["documents"][2],
                             load["voice"][0], load["voice"][1], load["voice"][2], load["voice"][4],
                             load["chat"][0], load["chat"][1], load["chat"][2], load["chat"][4]),
        "- TTFT: from sending the request to the first streamed text; a failed request counts "
        "as an infinite wait. Failures: a non-200 answer, an error event, a stream without "
        "`[DONE]`, or no byte for %d s. tok/s: answer tokens of the flood-only scenario over "
        "its wall time. Peak RSS: the server process's VmHWM at the end of each scenario (a "
        "fresh process per scenario), the largest of a run's three." % REQUEST_TIMEOUT_S,
        "- Libraries (mapped, from `/proc/PID/maps`): %s." % library_note(results, args.backend_dir),
        "",
        "Median over runs (min–max):",
        "",
        results["table"],
        END,
    ]
    return "\n".join(lines)


def write_results(path, body):
    """Replaces the generated part of the section, keeping notes written around it."""
    text = open(path).read() if os.path.exists(path) else ""
    if SECTION not in text:
        text = text.rstrip("\n") + "\n\n" + SECTION + "\n\n" + body + "\n"
    elif BEGIN in text and END in text:
        text = text[:text.index(BEGIN)] + body + text[text.index(END) + len(END):]
    else:
        at = text.index(SECTION) + len(SECTION)
        text = text[:at] + "\n\n" + body + "\n" + text[at:]
    with open(path, "w") as f:
        f.write(text)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--hearth-serve")
    p.add_argument("--llama-server")
    p.add_argument("--llama-lib", help="folder whose libllama.so.0 is the prebuilt one")
    p.add_argument("--backend-dir", required=True, help="folder of the prebuilt libggml-cpu-*.so")
    p.add_argument("--model")
    p.add_argument("--out", required=True)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--servers", default=",".join(SERVERS))
    p.add_argument("--model-desc", default="the self-written model")
    p.add_argument("--results-md", help="bench/RESULTS.md to write the table into (none: print only)")
    p.add_argument("--command", default="bench/peer/run_peer.sh")
    p.add_argument("--commit", default="unknown")
    p.add_argument("--from-json", help="an earlier run's results.json: write its section again, measure nothing")
    args = p.parse_args()
    missing = [n for n in ("hearth_serve", "llama_server", "llama_lib", "model")
               if getattr(args, n) is None]
    if missing and not args.from_json:
        p.error("missing %s (or give --from-json)" % ", ".join("--" + n.replace("_", "-") for n in missing))
    args.servers = [s for s in args.servers.split(",") if s]
    bad = [s for s in args.servers if s not in SERVERS]
    if bad or not args.servers:
        p.error("--servers %s: each must be one of %s" % (",".join(bad) or "(empty)", ",".join(SERVERS)))
    if not 1 <= args.runs <= 20:
        p.error("--runs is %d; must be in [1, 20]" % args.runs)
    os.makedirs(args.out, exist_ok=True)
    args.household = os.path.join(args.out, "household.toml")
    with open(args.household, "w") as f:
        f.write(HOUSEHOLD_TOML)
    if args.from_json:
        with open(args.from_json) as f:
            results = json.load(f)
        args.servers = [s for s in SERVERS if s in results["servers"]]
        args.command, args.commit = results["command"], results["commit"]
        args.model_desc = results.get("model_desc", args.model_desc)
    else:
        results = measure(args)
        results["command"], results["commit"] = args.command, args.commit
        results["model_desc"] = args.model_desc
        results["date"] = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    results["repo"] = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    results["table"] = table(results)
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(results, f, indent=1, default=finite)
    body = section_body(results, args)
    with open(os.path.join(args.out, "section.md"), "w") as f:
        f.write(body + "\n")
    print(body)
    if args.results_md:
        write_results(args.results_md, body)
        print("wrote %s" % args.results_md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
