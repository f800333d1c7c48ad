package main

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"
)

// Server is the Ollama-shaped host: handlers submit and wait; the engine
// goroutine steps the scheduler and routes each result to its waiter.
type Server struct {
	sched   *Scheduler
	mu      sync.Mutex
	waiters map[uint64]chan Result
	done    chan struct{}
}

// Generate is what an HTTP handler would call: submit, then wait.
func (s *Server) Generate(user, class string, prompt, maxNew int32) (Result, error) {
	ch := make(chan Result, 1)
	// Held across Submit so that the engine cannot see the result before the
	// waiter is registered.
	s.mu.Lock()
	id, err := s.sched.Submit(user, class, prompt, maxNew)
	if err == nil {
		s.waiters[id] = ch
	}
	s.mu.Unlock()
	if err != nil {
		return Result{}, err
	}
	return <-ch, nil
}

// engine owns Plan/Complete: one goroutine, locked to one OS thread, as the
// C API's thread-safety contract asks.
func (s *Server) engine(start time.Time) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for {
		select {
		case <-s.done:
			return nil
		default:
		}
		n, err := s.sched.Step(time.Since(start).Seconds())
		if err != nil {
			return err
		}
		results, err := s.sched.Drain()
		if err != nil {
			return err
		}
		s.mu.Lock()
		for _, r := range results {
			s.waiters[r.ID] <- r
			delete(s.waiters, r.ID)
		}
		s.mu.Unlock()
		if n == 0 {
			time.Sleep(time.Millisecond) // idle: wait for submissions
		}
	}
}

func run() error {
	sched, err := NewScheduler(`{"users": [{"name": "ana"}, {"name": "ben"}, {"name": "cy"}],
	  "work_classes": "household", "kv": {"num_device_blocks": 512}}`)
	if err != nil {
		return err
	}
	defer sched.Close()
	s := &Server{sched: sched, waiters: map[uint64]chan Result{}, done: make(chan struct{})}
	engineErr := make(chan error, 1)
	go func() { engineErr <- s.engine(time.Now()) }()

	var wg sync.WaitGroup
	var mu sync.Mutex
	ended := map[string]int{}
	users := []string{"ana", "ben", "cy"}
	classes := []string{"voice", "chat", "agent"}
	for i := 0; i < 60; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r, err := s.Generate(users[i%3], classes[i%3], int32(32+16*(i%7)), int32(8+i%5))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				ended["error: "+err.Error()]++
				return
			}
			ended[r.Phase]++
		}(i)
	}
	wg.Wait()
	close(s.done)
	if err := <-engineErr; err != nil {
		return err
	}
	if ended["finished"] != 60 {
		return fmt.Errorf("expected 60 finished requests, got %v", ended)
	}
	text, err := sched.Metrics()
	if err != nil {
		return err
	}
	if !strings.Contains(text, "vllm:num_requests_running") {
		return fmt.Errorf("metrics lack the router names")
	}
	fmt.Printf("hearth %s via cgo: 60 requests from 60 goroutines finished; /metrics is %d bytes\n",
		Version(), len(text))
	return nil
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "go host:", err)
		os.Exit(1)
	}
}
