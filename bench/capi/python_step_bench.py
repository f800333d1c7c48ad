#!/usr/bin/env python3
"""A Python host's steady decode step through the `hearth` package, against
the library's own cost seen from Python, in one run.

The workload is bench/capi/capi_step_bench.cc's (household policy, 4 users,
5 classes, `running` decoding and `waiting` queued, metrics off). Each step:

  package     Scheduler.plan + reading the columns an engine feeds its
              kernels (ids, positions, token counts, block diffs) +
              Scheduler.complete(plan, tokens, completed_at): a fixed number
              of foreign calls, none per sequence;
  floor       the same scheduler driven by three raw ctypes calls
              (hearth_scheduler_plan, hearth_outcome_fill_from_plan,
              hearth_scheduler_complete): what any Python host pays at least;
  per_call    hearth_plan_sequence + hearth_outcome_add for every sequence,
              the C API's per-entry path, for comparison (fewer steps).

  HEARTH_C_LIBRARY=build-al/src/capi/libhearth_c.so.0 PYTHONPATH=src/python \\
      python3 bench/capi/python_step_bench.py [--running 1024] [--steps 400]

Reports microseconds per step (median of the timed steps) and ratios; a
benchmark, not a test: compare ratios, not times, across machines.
"""

import argparse
import ctypes
import statistics
import time

import hearth
from hearth import _native


def options(running, waiting, steps):
    positions = steps * 4 + 64
    return {"max_running": running, "max_batched_tokens": 2 * running,
            "kv": {"block_size": 16, "num_device_blocks": running * (2 + positions // 16) + 64},
            "max_pending_requests": running + waiting + 1,
            "models": [{"name": "default", "context_length": 1 << 20}],
            "users": [{"name": f"user{u}", "weight": 1 + u} for u in range(4)],
            "work_classes": [{"name": "voice", "priority": 4, "ttft_slo_s": 0.5},
                             {"name": "chat", "priority": 3, "ttft_slo_s": 2},
                             {"name": "agent", "priority": 2, "ttft_slo_s": 5},
                             {"name": "embedding", "priority": 1},
                             {"name": "maintenance", "priority": 0}],
            "policy": "household", "metrics": {"enabled": False}}


def steady(running, waiting, steps):
    s = hearth.Scheduler(options(running, waiting, steps))
    classes = ("voice", "chat", "agent", "embedding", "maintenance")
    for i in range(running + waiting):
        s.submit(prompt_tokens=16, max_new_tokens=steps * 4 + 64, user=f"user{i % 4}",
                 work_class=classes[i % 5])
    return s


def warm(s, running, now):
    for _ in range(10000):
        plan = s.plan(now)
        decodes = plan.num_decodes
        s.complete(plan, [1] * len(plan))
        now += 0.02
        if decodes == running and s.stats()["queued"] == 0:
            return now
    raise RuntimeError("never reached steady decode")


def time_steps(step, count):
    times = []
    for _ in range(count):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--running", type=int, default=1024)
    parser.add_argument("--waiting", type=int, default=10000)
    parser.add_argument("--steps", type=int, default=400)
    args = parser.parse_args()
    np = None
    if hearth.has_numpy():
        import numpy as np
    lib = hearth._library()
    s = steady(args.running, args.waiting, args.steps)
    state = {"now": warm(s, args.running, 0.0)}
    tokens = np.ones(args.running, dtype=np.int32) if np is not None else [1] * args.running

    def package_step():
        plan = s.plan(state["now"])
        # What an engine reads to launch its kernels.
        _ = (plan.id, plan.start_position, plan.num_tokens, plan.flags, plan.blocks,
             plan.block_offset)
        state["now"] += 0.02
        s.complete(plan, tokens if len(plan) == args.running else [1] * len(plan),
                   completed_at=state["now"])

    error = ctypes.c_void_p()
    view = ctypes.c_void_p()

    def floor_step():
        lib.hearth_scheduler_plan(s._scheduler, state["now"], ctypes.byref(view),
                                  ctypes.byref(error))
        lib.hearth_outcome_fill_from_plan(s._outcome, view, ctypes.byref(error))
        lib.hearth_scheduler_complete(s._scheduler, s._outcome, ctypes.byref(error))
        state["now"] += 0.02

    sequence = _native.Sequence()

    def per_call_step():
        lib.hearth_scheduler_plan(s._scheduler, state["now"], ctypes.byref(view),
                                  ctypes.byref(error))
        lib.hearth_outcome_begin(s._outcome, view, ctypes.byref(error))
        for i in range(lib.hearth_plan_count(view, 0)):
            lib.hearth_plan_sequence(view, i, ctypes.byref(sequence), ctypes.byref(error))
            lib.hearth_outcome_add(s._outcome, sequence.id, sequence.sample, 1, 0,
                                   ctypes.byref(error))
        lib.hearth_scheduler_complete(s._scheduler, s._outcome, ctypes.byref(error))
        state["now"] += 0.02

    floor = time_steps(floor_step, args.steps)
    package = time_steps(package_step, args.steps)
    per_call = time_steps(per_call_step, max(10, args.steps // 10))
    floor_again = time_steps(floor_step, args.steps)
    floor = min(floor, floor_again)
    print(f"hearth {hearth.version()}, numpy: {hearth.has_numpy()}, "
          f"{args.running} running / {args.waiting} waiting, median of {args.steps} steps")
    print(f"  floor     {floor:9.1f} us/step  (3 raw calls: plan, fill_from_plan, complete)")
    print(f"  package   {package:9.1f} us/step  {package / floor:5.2f}x floor")
    print(f"  per_call  {per_call:9.1f} us/step  {per_call / floor:5.2f}x floor")
    s.close()


if __name__ == "__main__":
    main()
