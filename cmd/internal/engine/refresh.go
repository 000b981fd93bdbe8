package engine

import (
	"context"
	"sync"

	"github.com/agentledger/ledger/compact"
	"github.com/agentledger/ledger/store"
)

// recentMessages collects, per session, the latest messages a batch of
// files added (as stored), for the refresher: what extraction reads, so
// that it need not read them back.
type recentMessages map[string][]compact.Message

func (rm recentMessages) add(m compact.Message) {
	msgs := append(rm[m.SessionID], m)
	if len(msgs) >= 2*resumeMessages {
		msgs = append(msgs[:0:0], msgs[len(msgs)-resumeMessages:]...)
	}
	rm[m.SessionID] = msgs
}

// jobs are the refresh jobs of the sessions w wrote, given the
// sessions the batch's files added to.
func (rm recentMessages) job(w *store.Writer, sessionID string) refreshJob {
	msgs := rm[sessionID]
	if len(msgs) == 0 || !(w.Fresh(sessionID) || len(msgs) >= resumeMessages) {
		return refreshJob{sessionID: sessionID}
	}
	return refreshJob{sessionID: sessionID, recent: msgs, whole: true, lastSeq: w.LastSeq(sessionID)}
}

// resumeSaveBatch is how many extracted resume states an ingest gathers
// before it stores them (between two files, in one transaction).
const resumeSaveBatch = 16

// refresher extracts the resume states of the sessions an ingest adds to,
// on a goroutine of its own: the ingest's writer keeps one core busy, and
// extraction (read a session's latest messages, extract a handoff) takes
// the other. The ingest stores what it extracted between files, when no
// transaction of its own is open, and the rest at the end.
type refresher struct {
	ctx    context.Context
	st     *store.Store
	wake   chan struct{}
	done   chan struct{} // closed when the workers are done
	wg     sync.WaitGroup
	mu     sync.Mutex
	queue  []refreshJob
	queued map[string]int // session -> its place in queue
	held   int            // messages the queued jobs hold
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

// maxHeld caps the messages the queued jobs hold: past it, a job is
// queued without them, and its messages are read back from the ledger.
const maxHeld = 4 * resumeMessages

// add asks for a session's resume state. A session queued already and not
// started is asked for once, with the newer messages.
func (r *refresher) add(job refreshJob) {
	r.mu.Lock()
	if i, ok := r.queued[job.sessionID]; ok {
		r.held -= len(r.queue[i].recent)
		r.queue[i] = refreshJob{sessionID: job.sessionID} // read back: the two are not one run of messages
	} else {
		if r.held+len(job.recent) > maxHeld {
			job = refreshJob{sessionID: job.sessionID}
		}
		r.held += len(job.recent)
		r.queued[job.sessionID] = len(r.queue)
		r.queue = append(r.queue, job)
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
		if len(r.queue) == 0 || r.err != nil {
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
		r.held -= len(job.recent)
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

// save stores the states extracted so far, once there are at least min.
func (r *refresher) save(ctx context.Context, min int) error {
	r.mu.Lock()
	if len(r.ready) < max(min, 1) {
		r.mu.Unlock()
		return nil
	}
	ready := r.ready
	r.ready = nil
	r.mu.Unlock()
	return r.st.SaveResumeStates(ctx, ready)
}

// finish waits for what was asked (unless ctx is done) and stores it. The
// writer is done: a second worker takes the other core.
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
	return r.save(ctx, 1)
}
