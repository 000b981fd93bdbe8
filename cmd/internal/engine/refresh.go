package engine

import (
	"context"
	"sync"

	"github.com/agentledger/ledger/store"
)

// touchedSessions are the sessions a batch of files added messages to:
// the refresher's jobs. It extracts from the messages as stored, read
// back: holding a batch's messages until the ingest's end, for the few
// sessions among their project's latest, cost more memory than reading
// those back costs time.
type touchedSessions map[string]bool

// refresher extracts the resume states of the sessions an ingest adds to,
// once the ingest has written everything: then it knows which sessions
// are their project's latest or were active when it began, and extracts
// those only (see superseded), on both cores. Extracting a state while the writer was
// still at work, as each batch was committed, kept the other core busy
// with sessions a later file superseded: ingests walk a project's
// transcripts, oldest to newest as often as not.
type refresher struct {
	ctx    context.Context
	st     *store.Store
	wake   chan struct{}
	done   chan struct{} // closed when the workers are done
	wg     sync.WaitGroup
	mu     sync.Mutex
	queue  []refreshJob
	queued map[string]int // session -> its place in queue
	ready  []store.ResumeState
	closed bool
	err    error
}

func newRefresher(ctx context.Context, st *store.Store) *refresher {
	r := &refresher{ctx: ctx, st: st, wake: make(chan struct{}, 1), done: make(chan struct{}), queued: map[string]int{}}
	r.wg.Add(1)
	go r.run()
	go func() { r.wg.Wait(); close(r.done) }()
	return r
}

// add asks for a session's resume state, once.
func (r *refresher) add(sessionID string) {
	r.mu.Lock()
	if _, ok := r.queued[sessionID]; !ok {
		r.queued[sessionID] = len(r.queue)
		r.queue = append(r.queue, refreshJob{sessionID: sessionID, latestOnly: true})
	}
	r.mu.Unlock()
	r.signal()
}

func (r *refresher) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

func (r *refresher) run() {
	defer r.wg.Done()
	for {
		r.mu.Lock()
		if !r.closed || len(r.queue) == 0 || r.err != nil {
			closed := r.closed
			r.mu.Unlock()
			if closed {
				r.signal() // the other worker may be waiting too
				return
			}
			<-r.wake
			continue
		}
		job := r.queue[0]
		r.queue = r.queue[1:]
		delete(r.queued, job.sessionID)
		for id, i := range r.queued {
			r.queued[id] = i - 1
		}
		r.mu.Unlock()
		rs, ok, err := resumeState(r.ctx, r.st, job)
		r.mu.Lock()
		switch {
		case err != nil && !notFound(err):
			r.err = err
		case ok:
			r.ready = append(r.ready, rs)
		}
		r.mu.Unlock()
	}
}

// save stores the states extracted.
func (r *refresher) save(ctx context.Context) error {
	r.mu.Lock()
	if len(r.ready) == 0 {
		r.mu.Unlock()
		return nil
	}
	ready := r.ready
	r.ready = nil
	r.mu.Unlock()
	return r.st.SaveResumeStates(ctx, ready)
}

// finish extracts what was asked (unless ctx is done), on two workers,
// and stores it: the writer is done.
func (r *refresher) finish(ctx context.Context) error {
	r.mu.Lock()
	r.closed = true
	if ctx.Err() != nil {
		r.queue = nil // interrupted: do not keep the user waiting
	}
	more := len(r.queue) > 1
	if more {
		r.wg.Add(1) // before the first worker can see the queue empty and close done
	}
	r.mu.Unlock()
	if more {
		go r.run()
	}
	r.signal()
	<-r.done
	if err := ctx.Err(); err != nil {
		return nil // interrupted: the ingest says so; resume extracts what is missing
	}
	if r.err != nil {
		return r.err
	}
	return r.save(ctx)
}
