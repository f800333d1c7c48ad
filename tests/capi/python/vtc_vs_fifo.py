#!/usr/bin/env python3
"""A policy experiment driving Hearth through its C API with ctypes alone.

Two users share one simulated accelerator: alice floods it with long
prompts at time 0, bob sends a short request every quarter second. The same
workload runs under FIFO and under the Virtual Token Counter (VTC); the
built-in metrics report VTC's service gap, the largest difference in
weighted service between two users who both had work waiting. FIFO serves
alice's backlog first while bob waits, so the gap grows with the flood; VTC
serves whoever has received less, so it stays bounded. The script prints
both and fails unless VTC's gap is smaller.

The library is found through pkg-config (`pkg-config --variable=libdir
hearth`), as any host would find the installed package.
"""

import ctypes
import os
import subprocess
import sys

INF = float("inf")


class Request(ctypes.Structure):
    _fields_ = [("user", ctypes.c_char_p), ("work_class", ctypes.c_char_p),
                ("model", ctypes.c_char_p), ("prompt_tokens", ctypes.c_int32),
                ("prompt_token_ids", ctypes.POINTER(ctypes.c_int32)),
                ("num_prompt_token_ids", ctypes.c_size_t),
                ("max_new_tokens", ctypes.c_int32), ("priority", ctypes.c_int32),
                ("label", ctypes.c_char_p), ("arrival_time_s", ctypes.c_double),
                ("deadline_s", ctypes.c_double), ("parent", ctypes.c_uint64),
                ("ttft_slo_s", ctypes.c_double), ("tpot_slo_s", ctypes.c_double),
                ("handle", ctypes.c_uint64), ("cache_scope", ctypes.c_char_p),
                ("shared_prefix_tokens", ctypes.c_int32),
                ("shared_prefix_scope", ctypes.c_char_p), ("cache_opt_out", ctypes.c_int32),
                ("hold", ctypes.c_int32), ("kind", ctypes.c_int32),
                ("pooling", ctypes.c_int32), ("num_samples", ctypes.c_int32),
                ("encoder_spans", ctypes.c_void_p), ("num_encoder_spans", ctypes.c_size_t)]


class Metrics(ctypes.Structure):
    _fields_ = [(name, ctypes.c_uint64) for name in
                ("arrived", "finished", "cancelled", "rejected", "timed_out", "failed")] + [
        ("prefill_tokens", ctypes.c_int64), ("output_tokens", ctypes.c_int64)] + [
        (name, ctypes.c_double) for name in
        ("weighted_service", "normalized_service", "ttft_mean_s", "ttft_p99_s",
         "queue_wait_mean_s", "e2e_mean_s", "jain_index",
         "max_backlogged_service_gap")] + [("steps", ctypes.c_uint64)]


class Result(ctypes.Structure):
    _fields_ = [("id", ctypes.c_uint64), ("user", ctypes.c_char_p),
                ("work_class", ctypes.c_char_p), ("label", ctypes.c_char_p),
                ("phase", ctypes.c_int), ("finish_reason", ctypes.c_int),
                ("message", ctypes.c_char_p)] + [
        (name, ctypes.c_int32) for name in
        ("prompt_tokens", "output_tokens", "cached_prompt_tokens", "preemptions",
         "retries")] + [
        (name, ctypes.c_double) for name in
        ("arrival_time_s", "first_admit_time_s", "first_token_time_s", "end_time_s")] + [
        ("handle", ctypes.c_uint64)]


def load_library():
    pkg_config = os.environ.get("PKG_CONFIG") or "pkg-config"
    libdir = subprocess.run([pkg_config, "--variable=libdir", "hearth"], check=True,
                            capture_output=True, text=True).stdout.strip()
    lib = ctypes.CDLL(os.path.join(libdir, "libhearth_c.so.0"))
    P, E = ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)
    sigs = {
        "hearth_version": (ctypes.c_char_p, []),
        "hearth_error_message": (ctypes.c_char_p, [P]),
        "hearth_error_free": (None, [P]),
        "hearth_options_from_json": (ctypes.c_int, [ctypes.c_char_p, E, E]),
        "hearth_options_free": (None, [P]),
        "hearth_scheduler_create": (ctypes.c_int, [P, E, E]),
        "hearth_scheduler_free": (None, [P]),
        "hearth_request_default": (Request, []),
        "hearth_scheduler_submit": (ctypes.c_int, [P, ctypes.POINTER(Request),
                                                   ctypes.POINTER(ctypes.c_uint64), E]),
        "hearth_scheduler_plan": (ctypes.c_int, [P, ctypes.c_double, E, E]),
        "hearth_plan_num_batched_tokens": (ctypes.c_int32, [P]),
        "hearth_outcome_new": (ctypes.c_int, [E, E]),
        "hearth_outcome_free": (None, [P]),
        "hearth_outcome_fill_from_plan": (ctypes.c_int, [P, P, E]),
        "hearth_outcome_set_completed_at": (ctypes.c_int, [P, ctypes.c_double, E]),
        "hearth_scheduler_complete": (ctypes.c_int, [P, P, E]),
        "hearth_scheduler_drain": (ctypes.c_int, [P, E, E]),
        "hearth_results_count": (ctypes.c_size_t, [P]),
        "hearth_results_get": (ctypes.c_int, [P, ctypes.c_size_t,
                                              ctypes.POINTER(Result), E]),
        "hearth_results_free": (None, [P]),
        "hearth_scheduler_metrics": (ctypes.c_int, [P, ctypes.c_char_p,
                                                    ctypes.POINTER(Metrics), E]),
    }
    for name, (restype, argtypes) in sigs.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = restype, argtypes
    return lib


class Hearth:
    """Raises on any non-OK status, with the library's message."""

    def __init__(self, lib):
        self.lib = lib

    def __call__(self, name, *args):
        error = ctypes.c_void_p()
        status = getattr(self.lib, name)(*args, ctypes.byref(error))
        if status != 0:
            message = self.lib.hearth_error_message(error).decode()
            self.lib.hearth_error_free(error)
            raise RuntimeError(f"{name}: status {status}: {message}")


def run(lib, policy):
    call = Hearth(lib)
    options_json = ('{"users": [{"name": "alice"}, {"name": "bob"}],'
                    ' "kv": {"num_device_blocks": 4096},'
                    ' "max_batched_tokens": 512, "max_running": 32,'
                    f' "policy": "{policy}"}}').encode()
    options, scheduler, outcome = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
    call("hearth_options_from_json", options_json, ctypes.byref(options))
    call("hearth_scheduler_create", options, ctypes.byref(scheduler))
    lib.hearth_options_free(options)
    call("hearth_outcome_new", ctypes.byref(outcome))

    def submit(user, prompt, max_new, at):
        request = lib.hearth_request_default()
        request.user, request.prompt_tokens = user, prompt
        request.max_new_tokens, request.arrival_time_s = max_new, at
        request_id = ctypes.c_uint64()
        call("hearth_scheduler_submit", scheduler, ctypes.byref(request),
             ctypes.byref(request_id))

    for _ in range(200):                      # alice's flood: 400k prompt tokens
        submit(b"alice", 2000, 32, 0.0)
    bob_arrivals = [0.25 * i for i in range(1, 40)]
    submitted, ended, now = 200, 0, 0.0
    result = Result()
    while ended < submitted and now < 600:
        while bob_arrivals and bob_arrivals[0] <= now:
            submit(b"bob", 64, 16, bob_arrivals.pop(0))
            submitted += 1
        plan = ctypes.c_void_p()
        call("hearth_scheduler_plan", scheduler, now, ctypes.byref(plan))
        # A roofline-ish step: fixed launch cost plus a cost per token.
        now += 0.004 + 2.5e-5 * lib.hearth_plan_num_batched_tokens(plan)
        call("hearth_outcome_fill_from_plan", outcome, plan)
        call("hearth_outcome_set_completed_at", outcome, now)
        call("hearth_scheduler_complete", scheduler, outcome)
        results = ctypes.c_void_p()
        call("hearth_scheduler_drain", scheduler, ctypes.byref(results))
        for i in range(lib.hearth_results_count(results)):
            call("hearth_results_get", results, i, ctypes.byref(result))
            if result.phase != 5:  # HEARTH_PHASE_FINISHED
                raise RuntimeError(f"request {result.id} ended {result.phase}: "
                                   f"{result.message.decode()}")
            ended += 1
        lib.hearth_results_free(results)
        if not bob_arrivals and lib.hearth_plan_num_batched_tokens(plan) == 0:
            now += 0.01  # idle: let the clock reach the next arrival

    total, bob = Metrics(), Metrics()
    call("hearth_scheduler_metrics", scheduler, None, ctypes.byref(total))
    call("hearth_scheduler_metrics", scheduler, b"user:bob", ctypes.byref(bob))
    lib.hearth_outcome_free(outcome)
    lib.hearth_scheduler_free(scheduler)
    if ended != submitted:
        raise RuntimeError(f"{policy}: {submitted - ended} requests never ended")
    return total, bob, now


def main():
    lib = load_library()
    print(f"hearth {lib.hearth_version().decode()} via ctypes")
    print(f"{'policy':8} {'service gap':>12} {'bob TTFT mean':>14} {'bob TTFT p99':>13} "
          f"{'Jain':>6} {'makespan':>9}")
    gaps = {}
    for policy in ("fifo", "vtc"):
        total, bob, makespan = run(lib, policy)
        gaps[policy] = total.max_backlogged_service_gap
        print(f"{policy:8} {gaps[policy]:12.0f} {bob.ttft_mean_s:13.3f}s "
              f"{bob.ttft_p99_s:12.3f}s {total.jain_index:6.3f} {makespan:8.1f}s")
    if not 0 <= gaps["vtc"] < gaps["fifo"]:
        print(f"FAIL: VTC's service gap {gaps['vtc']:.0f} is not below FIFO's "
              f"{gaps['fifo']:.0f}")
        return 1
    print(f"VTC keeps the service gap {gaps['fifo'] / max(gaps['vtc'], 1):.0f}x "
          f"smaller than FIFO")
    return 0


if __name__ == "__main__":
    sys.exit(main())
