"""libhearth_c through ctypes: the C structs' layouts and every function's
signature, in one place (they mirror include/hearth/c/hearth.h).

The library is found, in order, at $HEARTH_C_LIBRARY (a path), next to this
package as installed (`_install_paths.py`, written by `cmake --install`), then by
the linker's search (ctypes.util.find_library("hearth_c")).
"""

import ctypes
import ctypes.util
import os

c_int32, c_uint32 = ctypes.c_int32, ctypes.c_uint32
c_int64, c_uint64 = ctypes.c_int64, ctypes.c_uint64
c_uint8, c_double = ctypes.c_uint8, ctypes.c_double
c_size_t, c_char_p = ctypes.c_size_t, ctypes.c_char_p
P = ctypes.c_void_p
E = ctypes.POINTER(ctypes.c_void_p)  # hearth_error** and every other T**


def _p(t):
    return ctypes.POINTER(t)


class EncoderSpan(ctypes.Structure):
    _fields_ = [("position", c_int32), ("length", c_int32), ("content_hash", c_uint64)]


class Request(ctypes.Structure):
    _fields_ = [("user", c_char_p), ("work_class", c_char_p), ("model", c_char_p),
                ("prompt_tokens", c_int32), ("prompt_token_ids", _p(c_int32)),
                ("num_prompt_token_ids", c_size_t), ("max_new_tokens", c_int32),
                ("priority", c_int32), ("label", c_char_p), ("arrival_time_s", c_double),
                ("deadline_s", c_double), ("parent", c_uint64), ("ttft_slo_s", c_double),
                ("tpot_slo_s", c_double), ("handle", c_uint64), ("cache_scope", c_char_p),
                ("shared_prefix_tokens", c_int32), ("shared_prefix_scope", c_char_p),
                ("cache_opt_out", c_int32), ("hold", c_int32),
                ("kind", c_int32), ("pooling", c_int32), ("num_samples", c_int32),
                ("encoder_spans", _p(EncoderSpan)), ("num_encoder_spans", c_size_t)]


class Sequence(ctypes.Structure):
    _fields_ = [("id", c_uint64), ("model", c_uint32), ("start_position", c_int32),
                ("num_tokens", c_int32), ("sample", c_int32), ("decode", c_int32),
                ("full_block_table", c_int32), ("block_table", _p(c_uint32)),
                ("num_block_table", c_size_t), ("new_blocks", _p(c_uint32)),
                ("num_new_blocks", c_size_t), ("token_ids", _p(c_int32)),
                ("num_token_ids", c_size_t), ("handle", c_uint64)]


class PlanEntry(ctypes.Structure):
    _fields_ = [("id", c_uint64), ("kind", c_int32), ("source", c_uint32),
                ("target", c_uint32), ("handle", c_uint64)]


class PlanArrays(ctypes.Structure):
    _fields_ = [("step", c_uint64), ("num_batched_tokens", c_int32), ("num_decodes", c_int32),
                ("num_sequences", c_size_t), ("id", _p(c_uint64)), ("handle", _p(c_uint64)),
                ("model", _p(c_uint32)), ("start_position", _p(c_int32)),
                ("num_tokens", _p(c_int32)), ("draft_tokens", _p(c_int32)),
                ("flags", _p(c_uint8)), ("blocks", _p(c_uint32)),
                ("block_offset", _p(c_uint64)), ("block_table", _p(_p(c_uint32))),
                ("num_block_table", _p(c_uint64)), ("token_ids", _p(c_int32)),
                ("token_offset", _p(c_uint64)),
                ("num_preempted", c_size_t), ("preempted", _p(PlanEntry)),
                ("num_released", c_size_t), ("released", _p(PlanEntry)),
                ("num_swap_out", c_size_t), ("swap_out", _p(PlanEntry)),
                ("num_swap_in", c_size_t), ("swap_in", _p(PlanEntry)),
                ("num_copy_on_write", c_size_t), ("copy_on_write", _p(PlanEntry)),
                ("num_model_commands", c_size_t), ("model_commands", _p(PlanEntry)),
                ("num_encoder_inputs", c_size_t), ("encoder_inputs", _p(PlanEntry)),
                ("num_encoder_frees", c_size_t), ("encoder_frees", _p(PlanEntry)),
                ("num_encoder_tokens", c_int32)]


class Result(ctypes.Structure):
    _fields_ = [("id", c_uint64), ("user", c_char_p), ("work_class", c_char_p),
                ("label", c_char_p), ("phase", ctypes.c_int), ("finish_reason", ctypes.c_int),
                ("message", c_char_p)] + [
        (name, c_int32) for name in
        ("prompt_tokens", "output_tokens", "cached_prompt_tokens", "preemptions", "retries")] + [
        (name, c_double) for name in
        ("arrival_time_s", "first_admit_time_s", "first_token_time_s", "end_time_s")] + [
        ("handle", c_uint64)]


class Stats(ctypes.Structure):
    _fields_ = [("steps", c_uint64)] + [
        (name, c_int32) for name in
        ("queued", "waiting", "preparing", "running", "swapped", "free_device_blocks",
         "cached_device_blocks", "kv_block_limit", "free_host_blocks")] + [
        ("resident_weight_bytes", c_int64)] + [
        (name, c_uint64) for name in
        ("prefix_hit_tokens", "preemptions", "finished", "engine_out_of_kv_preemptions",
         "retries")]


class Metrics(ctypes.Structure):
    _fields_ = [(name, c_uint64) for name in
                ("arrived", "finished", "cancelled", "rejected", "timed_out", "failed")] + [
        ("prefill_tokens", c_int64), ("output_tokens", c_int64)] + [
        (name, c_double) for name in
        ("weighted_service", "normalized_service", "ttft_mean_s", "ttft_p99_s",
         "queue_wait_mean_s", "e2e_mean_s", "jain_index", "max_backlogged_service_gap")] + [
        ("steps", c_uint64)]


# name: (result type, argument types); every function that takes a trailing
# hearth_error** lists it (E).
_SIGNATURES = {
    "hearth_error_code": (ctypes.c_int, [P]),
    "hearth_error_message": (c_char_p, [P]),
    "hearth_error_free": (None, [P]),
    "hearth_status_name": (c_char_p, [ctypes.c_int]),
    "hearth_string_free": (None, [P]),
    "hearth_version": (c_char_p, []),
    "hearth_options_from_json": (ctypes.c_int, [c_char_p, E, E]),
    "hearth_options_free": (None, [P]),
    "hearth_scheduler_create": (ctypes.c_int, [P, E, E]),
    "hearth_scheduler_free": (None, [P]),
    "hearth_request_default": (Request, []),
    "hearth_scheduler_submit": (ctypes.c_int, [P, _p(Request), _p(c_uint64), E]),
    "hearth_scheduler_cancel_reason": (ctypes.c_int, [P, c_uint64, c_char_p, E]),
    "hearth_scheduler_release": (ctypes.c_int, [P, c_uint64, E]),
    "hearth_scheduler_set_priority": (ctypes.c_int, [P, c_uint64, c_int32, E]),
    "hearth_scheduler_set_work_class": (ctypes.c_int, [P, c_uint64, c_char_p, E]),
    "hearth_scheduler_add_model": (ctypes.c_int, [P, c_char_p, _p(ctypes.c_uint32), E]),
    "hearth_scheduler_remove_model": (ctypes.c_int, [P, c_char_p, E]),
    "hearth_scheduler_next_event_time": (c_double, [P]),
    "hearth_scheduler_wait_for_work": (c_int32, [P, c_double]),
    "hearth_scheduler_wake": (None, [P]),
    "hearth_scheduler_plan": (ctypes.c_int, [P, c_double, E, E]),
    "hearth_plan_count": (c_size_t, [P, ctypes.c_int]),
    "hearth_plan_sequence": (ctypes.c_int, [P, c_size_t, _p(Sequence), E]),
    "hearth_plan_entry_at": (ctypes.c_int, [P, ctypes.c_int, c_size_t, _p(PlanEntry), E]),
    "hearth_plan_get_arrays": (ctypes.c_int, [P, _p(PlanArrays), c_size_t, E]),
    "hearth_outcome_new": (ctypes.c_int, [E, E]),
    "hearth_outcome_free": (None, [P]),
    "hearth_outcome_begin": (ctypes.c_int, [P, P, E]),
    "hearth_outcome_set_completed_at": (ctypes.c_int, [P, c_double, E]),
    "hearth_outcome_add": (ctypes.c_int, [P, c_uint64, c_int32, c_int32, ctypes.c_int, E]),
    "hearth_outcome_add_speculative": (ctypes.c_int, [P, c_uint64, _p(c_int32), c_size_t,
                                                      c_int32, ctypes.c_int, E]),
    "hearth_outcome_add_failed": (ctypes.c_int, [P, c_uint64, c_char_p, E]),
    "hearth_outcome_add_out_of_kv": (ctypes.c_int, [P, c_uint64, E]),
    "hearth_outcome_add_failed_load": (ctypes.c_int, [P, c_uint32, c_char_p, E]),
    "hearth_outcome_add_arrays": (ctypes.c_int, [P, c_size_t, P, P, P, P, E]),
    "hearth_scheduler_complete": (ctypes.c_int, [P, P, E]),
    "hearth_phase_name": (c_char_p, [ctypes.c_int]),
    "hearth_scheduler_drain": (ctypes.c_int, [P, E, E]),
    "hearth_results_count": (c_size_t, [P]),
    "hearth_results_get": (ctypes.c_int, [P, c_size_t, _p(Result), E]),
    "hearth_results_free": (None, [P]),
    "hearth_scheduler_stats": (ctypes.c_int, [P, _p(Stats), E]),
    "hearth_scheduler_published_stats": (ctypes.c_int, [P, _p(Stats), E]),
    "hearth_scheduler_metrics": (ctypes.c_int, [P, c_char_p, _p(Metrics), E]),
    "hearth_scheduler_prometheus_text": (ctypes.c_int, [P, c_int32, c_char_p, E,
                                                        _p(c_size_t), E]),
}


def _candidates():
    explicit = os.environ.get("HEARTH_C_LIBRARY")
    if explicit:
        yield explicit
        return
    try:
        from . import _install_paths  # written by `cmake --install`
        here = os.path.dirname(os.path.abspath(__file__))
        yield os.path.normpath(
            os.path.join(here, _install_paths.RELATIVE_LIBDIR, _install_paths.SONAME))
    except ImportError:
        pass
    found = ctypes.util.find_library("hearth_c")
    if found:
        yield found


def load():
    """The loaded library with every signature set; OSError naming each try."""
    tried = []
    for path in _candidates():
        try:
            lib = ctypes.CDLL(path)
        except OSError as error:
            tried.append(f"{path}: {error}")
            continue
        for name, (restype, argtypes) in _SIGNATURES.items():
            function = getattr(lib, name)
            function.restype, function.argtypes = restype, argtypes
        return lib
    raise OSError("libhearth_c not found; tried " + ("; ".join(tried) or "nothing") +
                  " (set HEARTH_C_LIBRARY to its path, or install the c component)")
