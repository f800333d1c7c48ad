#!/usr/bin/env python3
"""The installed Python package `hearth`, imported from the install prefix.

Run by consumers.sh (CTest capi/python_package) with PYTHONPATH naming the
prefix's package folder and no HEARTH_C_LIBRARY, so the package must load the
libhearth_c of its own prefix. It drives a household through the package's
one-call-per-step path with numpy, then again with HEARTH_NO_NUMPY=1
(memoryviews), and checks:
  * every submitted request ends exactly once, with its reason;
  * an engine that applies only the plans' flattened block diffs holds
    exactly each sequence's table, every step, through swaps and preemptions;
  * per-entry outcomes (failures, stop tokens) and array outcomes mix;
  * bad input raises HearthError with the library's code and message, or
    ValueError before any foreign call; a completed plan's views refuse;
  * every ```python block of README.md runs.
"""

import os
import subprocess
import sys

PREFIX = os.environ["HEARTH_PREFIX"]


def check(condition, what):
    if not condition:
        raise AssertionError(what)


def run_household(hearth):
    numpy = None
    if hearth.has_numpy():
        import numpy
    options = {"users": [{"name": "ana"}, {"name": "ben"}, {"name": "cai", "weight": 2}],
               "work_classes": "household", "preemption_mode": "swap",
               "kv": {"num_device_blocks": 96, "num_host_blocks": 256},
               "max_running": 16, "max_batched_tokens": 256}
    s = hearth.Scheduler(options)
    submitted = {}
    classes = ["voice", "chat", "agent", "embedding"]
    for i in range(48):
        user = ("ana", "ben", "cai")[i % 3]
        ids = [3 + (i * 7 + k) % 90 for k in range(20 + (i % 5) * 16)]
        rid = s.submit(prompt_token_ids=ids, max_new_tokens=10 + i % 17, user=user,
                       work_class=classes[i % 4], handle=5000 + i,
                       arrival_time_s=0.01 * i)
        submitted[rid] = 5000 + i
    tables, results, now, step = {}, {}, 0.0, 0
    fail_id = list(submitted)[-1]
    cancel_id = list(submitted)[7]
    lists_seen = set()
    while len(results) < len(submitted):
        check(step < 5000, "the household never finished")
        if step == 3:
            s.cancel(cancel_id, "member left")
        plan = s.plan(now)
        for name in ("preempted", "released", "swap_out", "swap_in", "copy_on_write"):
            entries = getattr(plan, name)
            if entries:
                lists_seen.add(name)
            if name in ("preempted", "released"):
                for e in entries:
                    if name == "released" or e.kind == 0:
                        tables.pop(e.handle, None)
        n = len(plan)
        flags, offsets, blocks = plan.flags, plan.block_offset, plan.blocks
        handles = plan.handle
        for i in range(n):
            held = tables.setdefault(int(handles[i]), [])
            if flags[i] & hearth.FULL_BLOCK_TABLE:
                held.clear()
            held.extend(int(b) for b in blocks[int(offsets[i]):int(offsets[i + 1])])
            check(held == [int(b) for b in plan.block_table(i)],
                  f"step {plan.step}: sequence {i}'s diffs do not rebuild its table")
        now += 0.02
        if any(int(x) == fail_id for x in plan.id) and step % 2 == 1:
            # Entry by entry: the first request's sequence fails once.
            outcome = s.outcome(plan)
            sample = plan.sample
            for i in range(n):
                if int(plan.id[i]) == fail_id:
                    outcome.add_failed(fail_id, "pretend GPU fault")
                    fail_id = -1
                else:
                    outcome.add(int(plan.id[i]), 7 if sample[i] else None)
            outcome.set_completed_at(now)
            outcome.complete()
        else:
            tokens = (numpy.full(n, 7, dtype=numpy.int32) if numpy is not None else [7] * n)
            finish = None
            sampled = [i for i in range(n) if plan.sample[i] and int(plan.id[i]) != fail_id]
            if sampled and step % 11 == 0:
                finish = ["none"] * n
                finish[sampled[0]] = "stop_token"
            s.complete(plan, tokens, completed_at=now, finish=finish)
        try:
            plan.id
            check(False, "a completed plan's columns must refuse")
        except hearth.HearthError as e:
            check(e.code_name == "FAILED_PRECONDITION", str(e))
        for r in s.drain():
            check(r.id not in results, f"request {r.id} ended twice")
            check(r.id in submitted and r.handle == submitted[r.id], f"unknown result {r}")
            results[r.id] = r
        step += 1
    phases = {}
    for r in results.values():
        phases[r.phase] = phases.get(r.phase, 0) + 1
    check(results[cancel_id].phase == "cancelled" and
          results[cancel_id].message.startswith("member left"), repr(results[cancel_id]))
    check(any(r.finish_reason == "stop_token" for r in results.values()), "no stop token")
    check(results[list(submitted)[-1]].retries == 1, "the failed sequence was not retried")
    check({"preempted", "released", "swap_out", "swap_in"} <= lists_seen,
          f"lists seen: {sorted(lists_seen)}")
    stats = s.stats()
    check(stats["running"] == 0 and stats["waiting"] == 0, str(stats))
    check(s.metrics("user:cai")["arrived"] == 16, str(s.metrics("user:cai")))
    check("hearth_requests_arrived_total" in s.prometheus_text(), "no exposition")
    s.close()
    return phases


def check_errors(hearth):
    try:
        hearth.Scheduler({"kv": {"num_device_blocks": -3}})
        check(False, "negative blocks accepted")
    except hearth.HearthError as e:
        check(e.code_name == "INVALID_ARGUMENT" and "num_device_blocks" in e.message, str(e))
    with hearth.Scheduler({"metrics": {"enabled": False}}) as s:
        try:
            s.submit(prompt_tokens=0, max_new_tokens=4)
            check(False, "an empty prompt accepted")
        except hearth.HearthError as e:
            check(e.code_name == "INVALID_ARGUMENT", str(e))
        try:
            s.submit(prompt_tokens=4, max_new_tokens=4, user="nobody")
            check(False, "an unknown user accepted")
        except hearth.HearthError as e:
            check(e.code_name == "NOT_FOUND", str(e))
        s.submit(prompt_tokens=4, max_new_tokens=4)
        plan = s.plan(0.0)
        try:
            s.complete(plan, [1, 2, 3])
            check(False, "a wrong-length tokens list accepted")
        except ValueError:
            pass
        try:
            s.complete(plan, [1], finish=["length"])
            check(False, "finish 'length' accepted")
        except KeyError:
            pass
        s.complete(plan, [1])  # the refusals above applied nothing
        try:
            s.metrics()
            check(False, "metrics with the collector off")
        except hearth.HearthError as e:
            check(e.code_name == "FAILED_PRECONDITION", str(e))
        check(s.wait_for_work(0.0), "work is live")
    try:
        s.plan(1.0)
        check(False, "a closed scheduler planned")
    except hearth.HearthError:
        pass
    with hearth.Scheduler() as s:
        held = s.submit(prompt_tokens=4, max_new_tokens=2, hold=True)
        plan = s.plan(0.0)
        check(len(plan) == 0 and s.stats()["waiting"] == 0, "a held request was planned")
        s.complete(plan, [])
        check(s.next_event_time() == float("inf"), "the engine should sleep while held")
        try:
            s.release(held + 50)
            check(False, "an unknown id released")
        except hearth.HearthError as e:
            check(e.code_name == "NOT_FOUND", str(e))
        s.release(held)
        try:
            s.release(held)
            check(False, "released twice")
        except hearth.HearthError as e:
            check(e.code_name == "FAILED_PRECONDITION", str(e))
        done, now = [], 0.0
        while not done:
            now += 0.02
            plan = s.plan(now)
            s.complete(plan, [3] * len(plan))
            done = s.drain()
        check(done[0].phase == "finished" and done[0].output_tokens == 2, repr(done[0]))
    with hearth.Scheduler({"max_batched_tokens": 16, "max_running": 8}) as s:
        for bad in ({"kind": "rerank"}, {"kind": "embed", "pooling": "max"}):
            try:
                s.submit(prompt_tokens=4, max_new_tokens=0, **bad)
                check(False, f"{bad} accepted")
            except hearth.HearthError as e:
                check(e.code_name == "INVALID_ARGUMENT", str(e))
        try:
            s.submit(prompt_tokens=4, max_new_tokens=3, kind="embed")
            check(False, "an embedding with max_new_tokens 3 accepted")
        except hearth.HearthError as e:
            check("must be 0" in e.message, str(e))
        embedding = s.submit(prompt_tokens=40, max_new_tokens=0, kind="embed", pooling="mean")
        done, now, pools = [], 0.0, []
        while not done:
            now += 0.02
            plan = s.plan(now)
            for i in range(len(plan)):
                flags = int(plan.flags[i])
                check(flags & hearth.EMBED and flags & hearth.MEAN_POOL and not plan.sample[i],
                      f"embedding planned with flags {flags}")
                pools.append(bool(plan.pool[i]))
            s.complete(plan, [0] * len(plan))
            done = s.drain()
        check(pools == [False, False, True], f"pooling steps {pools}")
        check(done[0].id == embedding and done[0].finish_reason == "pooled"
              and done[0].output_tokens == 0, repr(done[0]))
        first = s.submit(prompt_tokens=8, max_new_tokens=2, num_samples=3, handle=40)
        done = []
        while len(done) < 3:
            now += 0.02
            plan = s.plan(now)
            s.complete(plan, [1] * len(plan))
            done += s.drain()
        check(sorted((r.id - first, r.handle) for r in done) == [(0, 40), (1, 41), (2, 42)],
              repr(done))
        photo = s.submit(prompt_tokens=30, max_new_tokens=1,
                         encoder_spans=[(4, 12, (1 << 64) - 3)])
        inputs, done = [], []
        while not done:
            now += 0.02
            plan = s.plan(now)
            inputs += [(e.id, e.kind, e.target) for e in plan.encoder_inputs]
            s.complete(plan, [1] * len(plan))
            done = s.drain()
        check(inputs == [(photo, 1, 0)], f"encoder inputs {inputs}")


def check_runtime_models(hearth):
    """A model added while the scheduler runs loads through the plan, runs,
    and is removed once nothing needs it; the C API's refusals come through."""
    block = 16 * 1000  # block_size x kv_bytes_per_token
    options = {"kv": {"block_size": 16, "num_device_blocks": 128},
               "residency": {"device_memory_bytes": 300 * block},
               "models": [{"name": "llama", "kv_bytes_per_token": 1000,
                           "weights_bytes": 50 * block}]}
    with hearth.Scheduler(options) as s:
        index = s.add_model({"name": "qwen", "kv_bytes_per_token": 1000,
                             "weights_bytes": 60 * block, "keep_alive_s": 60})
        check(index == 1, f"qwen got index {index}")
        for bad, code in (({"name": "qwen"}, "INVALID_ARGUMENT"),
                          ({"name": "x", "colour": 1}, "INVALID_ARGUMENT"),
                          ("[1]", "INVALID_ARGUMENT"),
                          ({"name": "wide", "kv_bytes_per_token": 5000}, "INVALID_ARGUMENT")):
            try:
                s.add_model(bad)
                check(False, f"add_model({bad}) accepted")
            except hearth.HearthError as e:
                check(e.code_name == code, str(e))
        rid = s.submit(prompt_tokens=20, max_new_tokens=3, model="qwen")
        plan = s.plan(0.0)
        loads = [(e.kind, e.source) for e in plan.model_commands]
        check(loads == [(0, 1)], f"model commands {loads}")
        s.complete(plan, [])
        try:
            s.remove_model("qwen")
            check(False, "a model with a live request removed")
        except hearth.HearthError as e:
            check(e.code_name == "FAILED_PRECONDITION" and "not ended" in e.message, str(e))
        done, now = [], 0.0
        while not done:
            now += 0.02
            plan = s.plan(now)
            s.complete(plan, [2] * len(plan))
            done = s.drain()
        check(done[0].id == rid and done[0].phase == "finished", repr(done[0]))
        s.remove_model("qwen")
        plan = s.plan(now + 0.02)
        unloads = [(e.kind, e.source) for e in plan.model_commands]
        check(unloads == [(1, 1)], f"model commands {unloads}")
        s.complete(plan, [])
        try:
            s.submit(prompt_tokens=4, max_new_tokens=1, model="qwen")
            check(False, "a removed model accepted a request")
        except hearth.HearthError as e:
            check(e.code_name == "NOT_FOUND", str(e))


def run_readme_examples():
    """Every ```python block of README.md, each in a fresh namespace."""
    readme = os.path.join(os.environ["HEARTH_SOURCE_DIR"], "README.md")
    blocks, body = [], None
    with open(readme, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if body is None and line.strip() == "```python":
                body, start = [], number
            elif body is not None and line.strip() == "```":
                blocks.append((start, "".join(body)))
                body = None
            elif body is not None:
                body.append(line)
    check(blocks, "README.md has no python example")
    for start, code in blocks:
        exec(compile("\n" * start + code, readme, "exec"), {"__name__": "readme"})
    return len(blocks)


def main():
    import hearth
    where = os.path.realpath(hearth.__file__)
    check(where.startswith(os.path.realpath(PREFIX)), f"hearth imported from {where}")
    library = os.path.realpath(hearth._library()._name)
    check(library.startswith(os.path.realpath(PREFIX)), f"libhearth_c loaded from {library}")
    phases = run_household(hearth)
    check_errors(hearth)
    check_runtime_models(hearth)
    examples = run_readme_examples()
    print(f"hearth {hearth.version()} from {where}, numpy: {hearth.has_numpy()}; "
          f"results: {phases}; README python examples run: {examples}")
    if hearth.has_numpy():
        again = subprocess.run([sys.executable, __file__], env={**os.environ,
                               "HEARTH_NO_NUMPY": "1"})
        return again.returncode
    if os.environ.get("HEARTH_NO_NUMPY") is None:
        print("numpy not installed: only the memoryview path ran "
              "(cmake/scripts/setup_debian.sh installs python3-numpy)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
