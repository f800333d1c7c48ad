// Package main embeds Hearth in a Go server the way Ollama embeds its
// runner: request handlers on many goroutines submit work and wait on a
// channel, while one engine goroutine, locked to its OS thread, owns the
// plan -> run -> complete loop and hands each result back. This file is the
// thin cgo binding; main.go is the server.
package main

/*
#cgo pkg-config: hearth
#include <stdlib.h>
#include "hearth/c/hearth.h"
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// hearthError turns a failed call's status and error object into a Go error
// and frees the object.
func hearthError(call string, status C.hearth_status, e *C.hearth_error) error {
	if status == C.HEARTH_OK {
		return nil
	}
	defer C.hearth_error_free(e)
	return fmt.Errorf("%s: %s: %s", call, C.GoString(C.hearth_status_name(status)),
		C.GoString(C.hearth_error_message(e)))
}

// Scheduler owns a C scheduler. Submit and Cancel may be called from any
// goroutine; everything else from the engine goroutine only.
type Scheduler struct {
	s       *C.hearth_scheduler
	outcome *C.hearth_outcome
}

func NewScheduler(optionsJSON string) (*Scheduler, error) {
	var e *C.hearth_error
	var options *C.hearth_options
	text := C.CString(optionsJSON)
	defer C.free(unsafe.Pointer(text))
	if err := hearthError("options", C.hearth_options_from_json(text, &options, &e), e); err != nil {
		return nil, err
	}
	defer C.hearth_options_free(options)
	s := &Scheduler{}
	if err := hearthError("create", C.hearth_scheduler_create(options, &s.s, &e), e); err != nil {
		return nil, err
	}
	if err := hearthError("outcome", C.hearth_outcome_new(&s.outcome, &e), e); err != nil {
		C.hearth_scheduler_free(s.s)
		return nil, err
	}
	return s, nil
}

func (s *Scheduler) Close() {
	C.hearth_outcome_free(s.outcome)
	C.hearth_scheduler_free(s.s)
}

// Submit queues a request and returns its id.
func (s *Scheduler) Submit(user, class string, promptTokens, maxNewTokens int32) (uint64, error) {
	r := C.hearth_request_default()
	r.user = C.CString(user)
	defer C.free(unsafe.Pointer(r.user))
	r.work_class = C.CString(class)
	defer C.free(unsafe.Pointer(r.work_class))
	r.prompt_tokens = C.int32_t(promptTokens)
	r.max_new_tokens = C.int32_t(maxNewTokens)
	var id C.uint64_t
	var e *C.hearth_error
	err := hearthError("submit", C.hearth_scheduler_submit(s.s, &r, &id, &e), e)
	return uint64(id), err
}

// Step plans at `now` seconds, runs the plan on the pretend accelerator
// (every sampled position yields token 1) and completes it. Returns the
// number of sequences run.
func (s *Scheduler) Step(now float64) (int, error) {
	var e *C.hearth_error
	var plan *C.hearth_plan
	if err := hearthError("plan", C.hearth_scheduler_plan(s.s, C.double(now), &plan, &e), e); err != nil {
		return 0, err
	}
	n := int(C.hearth_plan_count(plan, C.HEARTH_PLAN_SEQUENCES))
	if err := hearthError("begin", C.hearth_outcome_begin(s.outcome, plan, &e), e); err != nil {
		return 0, err
	}
	for i := 0; i < n; i++ {
		var seq C.hearth_sequence
		if err := hearthError("sequence", C.hearth_plan_sequence(plan, C.size_t(i), &seq, &e), e); err != nil {
			return 0, err
		}
		// The block table the kernels would read, as a Go view of C memory.
		blocks := unsafe.Slice(seq.block_table, int(seq.num_block_table))
		if len(blocks) == 0 {
			return 0, fmt.Errorf("sequence %d has no blocks", uint64(seq.id))
		}
		if err := hearthError("add", C.hearth_outcome_add(s.outcome, seq.id, seq.sample, 1,
			C.HEARTH_FINISH_NONE, &e), e); err != nil {
			return 0, err
		}
	}
	return n, hearthError("complete", C.hearth_scheduler_complete(s.s, s.outcome, &e), e)
}

// Result is one ended request.
type Result struct {
	ID           uint64
	User         string
	Phase        string
	OutputTokens int
	TTFT         float64
}

// Drain returns every request that ended since the last call.
func (s *Scheduler) Drain() ([]Result, error) {
	var e *C.hearth_error
	var results *C.hearth_results
	if err := hearthError("drain", C.hearth_scheduler_drain(s.s, &results, &e), e); err != nil {
		return nil, err
	}
	defer C.hearth_results_free(results)
	out := make([]Result, 0, int(C.hearth_results_count(results)))
	for i := 0; i < cap(out); i++ {
		var r C.hearth_result
		if err := hearthError("result", C.hearth_results_get(results, C.size_t(i), &r, &e), e); err != nil {
			return nil, err
		}
		out = append(out, Result{ID: uint64(r.id), User: C.GoString(r.user),
			Phase:        C.GoString(C.hearth_phase_name(r.phase)),
			OutputTokens: int(r.output_tokens),
			TTFT:         float64(r.first_token_time_s - r.arrival_time_s)})
	}
	return out, nil
}

// Metrics is the Prometheus text for /metrics.
func (s *Scheduler) Metrics() (string, error) {
	var e *C.hearth_error
	var text *C.char
	var length C.size_t
	if err := hearthError("metrics", C.hearth_scheduler_prometheus_text(s.s, 1, nil, &text, &length, &e), e); err != nil {
		return "", err
	}
	defer C.hearth_string_free(text)
	return C.GoStringN(text, C.int(length)), nil
}

func Version() string { return C.GoString(C.hearth_version()) }
