"""Hearth's scheduler for Python hosts: ctypes over libhearth_c (the C API,
hearth/c/hearth.h), no compiled extension.

The iteration contract is the C++ one. Any thread submits, cancels and
drains; the engine thread plans, runs the plan and completes it. A step costs
a fixed handful of foreign calls, however many sequences it runs: the plan
is read as arrays (hearth_plan_get_arrays) and the outcome written from
arrays (hearth_outcome_add_arrays). With numpy (Debian's python3-numpy) the
plan's columns are numpy arrays viewing the scheduler's memory; without it
(or with HEARTH_NO_NUMPY=1) they are memoryviews of the same memory.

Example:

    import hearth
    with hearth.Scheduler({"kv": {"num_device_blocks": 4096},
                           "work_classes": "household"}) as s:
        s.submit(prompt_tokens=40, max_new_tokens=8, work_class="voice", handle=42)
        done, now = [], 0.0
        while not done:
            plan = s.plan(now)
            # apply plan.released, plan.preempted, plan.swap_out, plan.swap_in,
            # plan.copy_on_write, plan.model_commands; run the sequences:
            # plan.id, plan.start_position, plan.num_tokens, plan.blocks ...
            tokens = [1] * len(plan)           # what the engine sampled
            now += 0.02
            s.complete(plan, tokens, completed_at=now)
            done = s.drain()
        print(done[0].phase, done[0].output_tokens)

Views into a plan (its columns and lists) are valid until that plan is
completed; copy what must outlive it. A Scheduler is closed by close(), by
leaving its `with` block, or when it is garbage collected.
"""

import ctypes
import json
import math
import os
import threading

from . import _native

# HEARTH_NO_NUMPY=1 keeps memoryviews even where numpy is installed.
if os.environ.get("HEARTH_NO_NUMPY", "") not in ("", "0"):
    _np = None
else:
    try:
        import numpy as _np
    except ImportError:  # the package works without numpy, with memoryviews
        _np = None

__all__ = ["HearthError", "Plan", "Result", "Scheduler", "Outcome", "version", "has_numpy",
           "SAMPLE", "DECODE", "FULL_BLOCK_TABLE", "INPUT_PENDING", "EMBED", "MEAN_POOL",
           "POOL"]

# Bits of Plan.flags (HEARTH_SEQUENCE_*).
SAMPLE, DECODE, FULL_BLOCK_TABLE, INPUT_PENDING = 1, 2, 4, 8
EMBED, MEAN_POOL, POOL = 16, 32, 64

_FINISH = {"none": 0, "stop_token": 1, "stop_string": 2}
_FINISH_NAMES = ("none", "stop_token", "stop_string", "length", "pooled")
_KINDS = {"generate": 0, "embed": 1}
_POOLINGS = {"last": 0, "mean": 1}
_LISTS = {"sequences": 0, "preempted": 1, "released": 2, "swap_out": 3, "swap_in": 4,
          "copy_on_write": 5, "model_commands": 6, "voided": 7, "encoder_inputs": 8,
          "encoder_frees": 9}

_NO_REQUEST = (1 << 64) - 1  # HEARTH_NO_REQUEST

_lib = None
_lib_lock = threading.Lock()


def _library():
    global _lib
    with _lib_lock:
        if _lib is None:
            _lib = _native.load()
        return _lib


def version():
    """The linked libhearth_c's version, "MAJOR.MINOR.PATCH"."""
    return _library().hearth_version().decode()


def has_numpy():
    """Whether plan columns are numpy arrays (else memoryviews)."""
    return _np is not None


class HearthError(Exception):
    """A call the library refused: `code` is the absl::StatusCode number,
    `code_name` its name ("INVALID_ARGUMENT"), `message` what was wrong and
    what is allowed."""

    def __init__(self, function, code, message):
        self.function, self.code, self.message = function, code, message
        self.code_name = _library().hearth_status_name(code).decode()
        super().__init__(f"{function}: {self.code_name}: {message}")


def _call(name, *args):
    lib = _library()
    error = ctypes.c_void_p()
    status = getattr(lib, name)(*args, ctypes.byref(error))
    if status != 0:
        message = lib.hearth_error_message(error).decode(errors="replace")
        lib.hearth_error_free(error)
        raise HearthError(name, status, message)


def _text(value):
    return None if value is None else str(value).encode()


def _column(pointer, count, ctype):
    """`count` entries at `pointer`, viewed in place."""
    if count == 0 or not pointer:
        return _np.zeros(0, dtype=_np.dtype(ctype)) if _np is not None else memoryview(b"")
    if _np is not None:
        return _np.ctypeslib.as_array(pointer, shape=(count,))
    # ctypes exports "<Q"-style formats, which memoryview cannot index;
    # cast through bytes to the native code of the same type.
    view = memoryview(ctypes.cast(pointer, ctypes.POINTER(ctype * count)).contents)
    return view.cast("B").cast(ctype._type_)


class Result:
    """A request's one result (hearth_result): phase is "finished",
    "cancelled", "rejected", "timed_out" or "failed"; finish_reason "none",
    "stop_token", "stop_string" or "length"; times in seconds on the plan
    clock (inf when the event never happened)."""

    __slots__ = ("id", "handle", "user", "work_class", "label", "phase", "finish_reason",
                 "message", "prompt_tokens", "output_tokens", "cached_prompt_tokens",
                 "preemptions", "retries", "arrival_time_s", "first_admit_time_s",
                 "first_token_time_s", "end_time_s")

    def __init__(self, r):
        lib = _library()
        self.id, self.handle = r.id, r.handle
        self.user = r.user.decode() if r.user else None
        self.work_class = r.work_class.decode() if r.work_class else None
        self.label = r.label.decode() if r.label else ""
        self.phase = lib.hearth_phase_name(r.phase).decode()
        self.finish_reason = (_FINISH_NAMES[r.finish_reason]
                              if 0 <= r.finish_reason < len(_FINISH_NAMES) else "unknown")
        self.message = r.message.decode(errors="replace") if r.message else ""
        for name in ("prompt_tokens", "output_tokens", "cached_prompt_tokens", "preemptions",
                     "retries", "arrival_time_s", "first_admit_time_s", "first_token_time_s",
                     "end_time_s"):
            setattr(self, name, getattr(r, name))

    def __repr__(self):
        return (f"Result(id={self.id}, handle={self.handle}, phase={self.phase!r}, "
                f"finish_reason={self.finish_reason!r}, output_tokens={self.output_tokens})")


class Plan:
    """One step's plan. len(plan) is its sequence count; sequence i is entry
    i of every column. Columns: id, handle, model, start_position,
    num_tokens, draft_tokens, flags (SAMPLE | DECODE | FULL_BLOCK_TABLE |
    INPUT_PENDING | EMBED | MEAN_POOL | POOL), and sample / decode / pool as
    booleans (pool: the embedding's vector is due after this chunk). blocks[block_offset[i]
    : block_offset[i + 1]] are the blocks sequence i's engine-side table
    gains (its whole table when FULL_BLOCK_TABLE); block_table(i) is its
    whole table; token_ids[token_offset[i] : token_offset[i + 1]] the token
    ids it computes. preempted, released, swap_out, swap_in, copy_on_write
    and model_commands are lists of entries with id, kind, source, target
    and handle (hearth_plan_entry), applied in that order before the
    sequences run; voided() is read last, just before complete."""

    def __init__(self, scheduler, pointer):
        self._scheduler, self._pointer, self._done = scheduler, pointer, False
        arrays = _native.PlanArrays()
        _call("hearth_plan_get_arrays", pointer, ctypes.byref(arrays), ctypes.sizeof(arrays))
        self._arrays = arrays
        self.step = arrays.step
        self.num_batched_tokens = arrays.num_batched_tokens
        self.num_decodes = arrays.num_decodes
        self._n = arrays.num_sequences
        self._columns = {}

    def __len__(self):
        return self._n

    def _alive(self):
        if self._done:
            raise HearthError("Plan", 9, f"plan of step {self.step} was already completed; "
                                         "its views are gone (copy what must outlive it)")

    def _get(self, name, count, ctype):
        self._alive()
        column = self._columns.get(name)
        if column is None:
            column = _column(getattr(self._arrays, name), count, ctype)
            self._columns[name] = column
        return column

    id = property(lambda self: self._get("id", self._n, ctypes.c_uint64))
    handle = property(lambda self: self._get("handle", self._n, ctypes.c_uint64))
    model = property(lambda self: self._get("model", self._n, ctypes.c_uint32))
    start_position = property(lambda self: self._get("start_position", self._n, ctypes.c_int32))
    num_tokens = property(lambda self: self._get("num_tokens", self._n, ctypes.c_int32))
    draft_tokens = property(lambda self: self._get("draft_tokens", self._n, ctypes.c_int32))
    flags = property(lambda self: self._get("flags", self._n, ctypes.c_uint8))
    block_offset = property(lambda self: self._get("block_offset", self._n + 1, ctypes.c_uint64))
    token_offset = property(lambda self: self._get("token_offset", self._n + 1, ctypes.c_uint64))

    @property
    def blocks(self):
        return self._get("blocks", int(self.block_offset[self._n]), ctypes.c_uint32)

    @property
    def token_ids(self):
        return self._get("token_ids", int(self.token_offset[self._n]), ctypes.c_int32)

    def _flag(self, bit):
        flags = self.flags
        if _np is not None:
            return (flags & bit) != 0
        return [bool(f & bit) for f in flags]

    sample = property(lambda self: self._flag(SAMPLE))
    decode = property(lambda self: self._flag(DECODE))
    pool = property(lambda self: self._flag(POOL))

    def block_table(self, i):
        """Sequence i's whole block table after this step, in place."""
        self._alive()
        if not 0 <= i < self._n:
            raise IndexError(f"sequence {i} of a plan of {self._n}")
        return _column(self._arrays.block_table[i], self._arrays.num_block_table[i],
                       ctypes.c_uint32)

    def _list(self, name):
        self._alive()
        count = getattr(self._arrays, "num_" + name)
        pointer = getattr(self._arrays, name)
        # Copies: entries are few, and a copy outlives the plan.
        return [_native.PlanEntry.from_buffer_copy(pointer[i]) for i in range(count)]

    preempted = property(lambda self: self._list("preempted"))
    released = property(lambda self: self._list("released"))
    swap_out = property(lambda self: self._list("swap_out"))
    swap_in = property(lambda self: self._list("swap_in"))
    copy_on_write = property(lambda self: self._list("copy_on_write"))
    model_commands = property(lambda self: self._list("model_commands"))
    # Multimodal prompts: the spans this step's sequences compute (kind 1:
    # encode into cache entry `source` first; target: the span's index in
    # the request's encoder_spans), and the entries to free before the
    # encodes. Applied after model_commands.
    encoder_inputs = property(lambda self: self._list("encoder_inputs"))
    encoder_frees = property(lambda self: self._list("encoder_frees"))
    num_encoder_tokens = property(lambda self: self._arrays.num_encoder_tokens)

    def voided(self):
        """Overlapped planning: entries of this plan voided while it was
        outstanding; final just before its complete."""
        self._alive()
        lib = _library()
        entries = []
        for i in range(lib.hearth_plan_count(self._pointer, _LISTS["voided"])):
            entry = _native.PlanEntry()  # a per-entry call: voided lists are rare
            _call("hearth_plan_entry_at", self._pointer, _LISTS["voided"], i,
                  ctypes.byref(entry))
            entries.append(entry)
        return entries


def _array(values, ctype, count, what):
    """`values` as a C array of `count` ctype, kept alive by the caller;
    None stays None (NULL)."""
    if values is None:
        return None, None
    if _np is not None and isinstance(values, _np.ndarray):
        array = _np.ascontiguousarray(values, dtype=_np.dtype(ctype))
        if array.shape != (count,):
            raise ValueError(f"{what} has shape {array.shape}; the plan has {count} sequences")
        return array, array.ctypes.data
    values = list(values)
    if len(values) != count:
        raise ValueError(f"{what} has {len(values)} entries; the plan has {count} sequences")
    array = (ctype * count)(*values)
    return array, ctypes.addressof(array)


class Outcome:
    """An outcome built entry by entry (the per-sequence calls), for hosts
    that report failures, out-of-KV, speculative drafts or failed loads;
    Scheduler.complete(plan, tokens) covers the common step in one call."""

    def __init__(self, scheduler, plan):
        self._scheduler, self._plan = scheduler, plan
        _call("hearth_outcome_begin", scheduler._outcome, plan._pointer)

    def add(self, id, token=None, finish="none"):
        """Sequence `id` ran; `token` is what it sampled (None: nothing)."""
        _call("hearth_outcome_add", self._scheduler._outcome, id, 0 if token is None else 1,
              0 if token is None else token, _FINISH[finish])

    def add_speculative(self, id, accepted_drafts, token, finish="none"):
        drafts = (ctypes.c_int32 * max(1, len(accepted_drafts)))(*accepted_drafts)
        _call("hearth_outcome_add_speculative", self._scheduler._outcome, id, drafts,
              len(accepted_drafts), token, _FINISH[finish])

    def add_failed(self, id, message):
        _call("hearth_outcome_add_failed", self._scheduler._outcome, id, _text(message))

    def add_out_of_kv(self, id):
        _call("hearth_outcome_add_out_of_kv", self._scheduler._outcome, id)

    def add_failed_load(self, model, message):
        _call("hearth_outcome_add_failed_load", self._scheduler._outcome, model, _text(message))

    def set_completed_at(self, seconds):
        _call("hearth_outcome_set_completed_at", self._scheduler._outcome, seconds)

    def complete(self):
        """Applies it; on an error nothing was applied and the plan stays."""
        self._scheduler._complete(self._plan)


class Scheduler:
    """A Hearth scheduler. `options`: a dict or JSON text of the C API's
    options (hearth/c/hearth.h lists every key), None for the defaults.
    Raises HearthError naming a wrong option and what is allowed.

    Thread-safety: submit, cancel, release, set_priority, set_work_class,
    add_model, remove_model, drain, wake and published_stats from any thread; the rest from the
    engine thread."""

    def __init__(self, options=None):
        lib = _library()
        if options is None:
            options = {}
        text = options if isinstance(options, str) else json.dumps(options)
        handle_options = ctypes.c_void_p()
        _call("hearth_options_from_json", text.encode(), ctypes.byref(handle_options))
        self._scheduler, self._outcome = ctypes.c_void_p(), ctypes.c_void_p()
        try:
            _call("hearth_scheduler_create", handle_options, ctypes.byref(self._scheduler))
        finally:
            lib.hearth_options_free(handle_options)
        _call("hearth_outcome_new", ctypes.byref(self._outcome))
        self._plans = []

    # ---- lifetime
    def close(self):
        lib = _library()
        if self._outcome:
            lib.hearth_outcome_free(self._outcome)
            self._outcome = ctypes.c_void_p()
        if self._scheduler:
            for plan in self._plans:
                plan._done = True
            lib.hearth_scheduler_free(self._scheduler)
            self._scheduler = ctypes.c_void_p()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: nothing left to free with
            pass

    def _open(self):
        if not self._scheduler:
            raise HearthError("Scheduler", 9, "the scheduler was closed")
        return self._scheduler

    # ---- any thread
    def submit(self, prompt_tokens=0, max_new_tokens=1, *, user=None, work_class=None,
               model=None, prompt_token_ids=None, priority=0, label=None,
               arrival_time_s=-math.inf, deadline_s=math.inf, parent=None, ttft_slo_s=0.0,
               tpot_slo_s=0.0, handle=0, cache_scope=None, shared_prefix_tokens=0,
               shared_prefix_scope=None, cache_opt_out=False, hold=False, kind="generate",
               pooling="last", num_samples=1, encoder_spans=()):
        """Validates and queues a request (hearth_request's fields); its id.
        kind "embed" (with max_new_tokens=0) is an embedding, pooled "last"
        or "mean"; it ends with finish_reason "pooled". num_samples=n > 1
        queues n samples with ids id .. id + n - 1 and handles handle + k.
        encoder_spans: (position, length, content_hash) per encoder span of a
        multimodal prompt (an image's tokens), sorted and disjoint."""
        if kind not in _KINDS:
            raise HearthError("hearth_scheduler_submit", 3,
                              f"kind is {kind!r}; must be one of {sorted(_KINDS)}")
        if pooling not in _POOLINGS:
            raise HearthError("hearth_scheduler_submit", 3,
                              f"pooling is {pooling!r}; must be one of {sorted(_POOLINGS)}")
        lib = _library()
        r = lib.hearth_request_default()
        r.user, r.work_class, r.model = _text(user), _text(work_class), _text(model)
        r.prompt_tokens, r.max_new_tokens, r.priority = prompt_tokens, max_new_tokens, priority
        r.label, r.arrival_time_s, r.deadline_s = _text(label), arrival_time_s, deadline_s
        r.parent = _NO_REQUEST if parent is None else parent
        r.ttft_slo_s, r.tpot_slo_s, r.handle = ttft_slo_s, tpot_slo_s, handle
        r.cache_scope, r.shared_prefix_tokens = _text(cache_scope), shared_prefix_tokens
        r.shared_prefix_scope, r.cache_opt_out = _text(shared_prefix_scope), int(cache_opt_out)
        r.hold = int(hold)
        r.kind, r.pooling = _KINDS[kind], _POOLINGS[pooling]
        r.num_samples = num_samples
        ids = None
        if prompt_token_ids is not None:
            ids = (ctypes.c_int32 * len(prompt_token_ids))(*prompt_token_ids)
            r.prompt_token_ids = ctypes.cast(ids, ctypes.POINTER(ctypes.c_int32))
            r.num_prompt_token_ids = len(prompt_token_ids)
        spans = None
        if encoder_spans:
            spans = (_native.EncoderSpan * len(encoder_spans))(
                *[_native.EncoderSpan(p, n, h) for p, n, h in encoder_spans])
            r.encoder_spans = ctypes.cast(spans, ctypes.POINTER(_native.EncoderSpan))
            r.num_encoder_spans = len(encoder_spans)
        request_id = ctypes.c_uint64()
        _call("hearth_scheduler_submit", self._open(), ctypes.byref(r), ctypes.byref(request_id))
        return request_id.value

    def cancel(self, id, reason=None):
        _call("hearth_scheduler_cancel_reason", self._open(), id, _text(reason))

    def release(self, id):
        """Makes a request submitted with hold=True ready to run."""
        _call("hearth_scheduler_release", self._open(), id)

    def set_priority(self, id, priority):
        _call("hearth_scheduler_set_priority", self._open(), id, priority)

    def set_work_class(self, id, work_class):
        _call("hearth_scheduler_set_work_class", self._open(), id, _text(work_class))

    def add_model(self, model):
        """Registers a model or adapter while the scheduler runs: `model` is a
        dict (or JSON text) with the keys of an options "models" entry.
        Returns its index (as in plan.model_commands); requests name it by
        its name. Raises HearthError (INVALID_ARGUMENT, RESOURCE_EXHAUSTED)."""
        text = model if isinstance(model, str) else json.dumps(model)
        index = ctypes.c_uint32()
        _call("hearth_scheduler_add_model", self._open(), _text(text), ctypes.byref(index))
        return index.value

    def remove_model(self, name):
        """Unregisters the model of that name; HearthError FAILED_PRECONDITION
        while a request of it has not ended or an adapter of it is
        registered."""
        _call("hearth_scheduler_remove_model", self._open(), _text(name))

    def drain(self):
        """Every result that ended since the last drain, exactly once."""
        lib = _library()
        results = ctypes.c_void_p()
        _call("hearth_scheduler_drain", self._open(), ctypes.byref(results))
        try:
            out = []
            r = _native.Result()
            for i in range(lib.hearth_results_count(results)):
                _call("hearth_results_get", results, i, ctypes.byref(r))
                out.append(Result(r))
            return out
        finally:
            lib.hearth_results_free(results)

    def wake(self):
        _library().hearth_scheduler_wake(self._open())

    def published_stats(self):
        return self._stats("hearth_scheduler_published_stats")

    # ---- engine thread
    def next_event_time(self):
        """-inf while work is live, a timer's time on the plan clock, or inf."""
        return _library().hearth_scheduler_next_event_time(self._open())

    def wait_for_work(self, timeout_s):
        """Sleeps up to `timeout_s` (inf: until work) unless there is work."""
        return bool(_library().hearth_scheduler_wait_for_work(self._open(), timeout_s))

    def plan(self, now):
        """The next step's Plan at `now` (seconds on the host's clock)."""
        pointer = ctypes.c_void_p()
        _call("hearth_scheduler_plan", self._open(), now, ctypes.byref(pointer))
        plan = Plan(self, pointer)
        self._plans = [p for p in self._plans if not p._done] + [plan]
        return plan

    def complete(self, plan, tokens=None, *, completed_at=None, ids=None, produced=None,
                 finish=None):
        """Completes `plan` with one entry per sequence, in plan order:
        tokens[i] is what sequence i sampled (read where it produced one;
        None when none did), produced[i] whether it did (None: where the
        plan samples), finish[i] "none" / "stop_token" / "stop_string" or
        their numbers (None: all "none"), ids the plan's (None) or the
        same ids. Sequences, arrays or numpy arrays of len(plan) entries."""
        plan._alive()
        _call("hearth_outcome_begin", self._outcome, plan._pointer)
        n = len(plan)
        if finish is not None and not (_np is not None and isinstance(finish, _np.ndarray)):
            finish = [_FINISH[f] if isinstance(f, str) else f for f in finish]
        keep = [_array(tokens, ctypes.c_int32, n, "tokens"),
                _array(ids, ctypes.c_uint64, n, "ids"),
                _array(produced, ctypes.c_uint8, n, "produced"),
                _array(finish, ctypes.c_uint8, n, "finish")]
        _call("hearth_outcome_add_arrays", self._outcome, n, keep[1][1], keep[2][1], keep[0][1],
              keep[3][1])
        if completed_at is not None:
            _call("hearth_outcome_set_completed_at", self._outcome, completed_at)
        self._complete(plan)

    def outcome(self, plan):
        """An Outcome for `plan`, to fill entry by entry."""
        plan._alive()
        return Outcome(self, plan)

    def _complete(self, plan):
        _call("hearth_scheduler_complete", self._open(), self._outcome)
        plan._done = True

    def stats(self):
        return self._stats("hearth_scheduler_stats")

    def _stats(self, function):
        out = _native.Stats()
        _call(function, self._open(), ctypes.byref(out))
        return {name: getattr(out, name) for name, _ in _native.Stats._fields_}

    def metrics(self, group=None):
        """The built-in collector's figures: the run (None), "user:<name>" or
        "class:<name>". HearthError FAILED_PRECONDITION with metrics off."""
        out = _native.Metrics()
        _call("hearth_scheduler_metrics", self._open(), _text(group), ctypes.byref(out))
        return {name: getattr(out, name) for name, _ in _native.Metrics._fields_}

    def prometheus_text(self, router_names=False, model_name=None):
        lib = _library()
        text = ctypes.c_void_p()  # char*, the caller's to free
        _call("hearth_scheduler_prometheus_text", self._open(), int(router_names),
              _text(model_name), ctypes.byref(text), None)
        try:
            return ctypes.string_at(text.value).decode()
        finally:
            lib.hearth_string_free(text)
