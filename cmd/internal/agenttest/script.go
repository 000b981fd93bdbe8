package agenttest

import (
	"encoding/json"
	"fmt"
	"sync"
)

// Turn is one answer of the scripted model, whatever the wire protocol:
// tool calls, or text, or both (text first), and the token counts to
// report with it.
type Turn struct {
	// Text is the answer's text ("" for none).
	Text string
	// Calls are the tool calls the model makes.
	Calls []Call
	// Usage is the token count reported with the answer. Zero fields get
	// small defaults (DefaultUsage); a large InputTokens drives an agent to
	// compact its context.
	Usage Usage
}

// Call is one tool call.
type Call struct {
	// ID is the call's id; "" for one made up (call_1, call_2...).
	ID string
	// Name is the tool called: one the request offers (Request.Tools).
	Name string
	// Input is the call's arguments for a function tool: anything that
	// encodes to a JSON object.
	Input any
	// Raw is the input of a custom (free-text) tool, such as Codex's
	// apply_patch; for a function tool it is used instead of Input when
	// set (a JSON object as text).
	Raw string
}

// Usage is a model's report of the tokens an answer took: InputTokens are
// the prompt's uncached tokens, CacheRead and CacheWrite the prompt's
// tokens read from and written to the prompt cache, OutputTokens the
// answer's. The context in use is InputTokens+CacheRead+CacheWrite.
type Usage struct {
	InputTokens, OutputTokens, CacheRead, CacheWrite int64
}

// DefaultUsage is reported for an answer whose Turn says nothing of usage.
var DefaultUsage = Usage{InputTokens: 1200, OutputTokens: 40}

// orDefault is u, or DefaultUsage when u is zero.
func (u Usage) orDefault() Usage {
	if u == (Usage{}) {
		return DefaultUsage
	}
	return u
}

// Context is the prompt's whole size: what a meter counts as the context
// in use.
func (u Usage) Context() int64 { return u.InputTokens + u.CacheRead + u.CacheWrite }

// Text is a turn that answers with text.
func Text(s string) Turn { return Turn{Text: s} }

// CallTool is a turn that calls one tool with input (a JSON object).
func CallTool(name string, input any) Turn {
	return Turn{Calls: []Call{{Name: name, Input: input}}}
}

// WithUsage returns t reporting u.
func (t Turn) WithUsage(u Usage) Turn {
	t.Usage = u
	return t
}

// inputJSON is a call's arguments as JSON text: Raw when set, else Input
// encoded ("{}" for none).
func (c Call) inputJSON() (string, error) {
	if c.Raw != "" {
		return c.Raw, nil
	}
	if c.Input == nil {
		return "{}", nil
	}
	b, err := json.Marshal(c.Input)
	if err != nil {
		return "", fmt.Errorf("encode the input of %s: %w", c.Name, err)
	}
	return string(b), nil
}

// Script decides the model's answer to each turn request. The server calls
// it for one request at a time, in order of arrival.
type Script func(*Request) Turn

// Rule answers the requests its When matches.
type Rule struct {
	// Name says what the rule is for, in the server's log.
	Name string
	When func(*Request) bool
	Then Script
}

// Rules is a script that answers with the first rule matching the request,
// else with otherwise.
func Rules(otherwise Script, rules ...Rule) Script {
	return func(r *Request) Turn {
		for _, rule := range rules {
			if rule.When(r) {
				return rule.Then(r)
			}
		}
		return otherwise(r)
	}
}

// Always answers every request with t.
func Always(t Turn) Script { return func(*Request) Turn { return t } }

// Steps answers with its turns in order, one per request it is asked, then
// with the last one again. A script usually gives it only the requests of
// the agent's own loop (see Rules), so that a compaction or a side request
// (a title, a topic) does not use up a step.
type Steps struct {
	mu    sync.Mutex
	turns []func(*Request) Turn
	n     int
}

// NewSteps makes Steps of turns.
func NewSteps(turns ...func(*Request) Turn) *Steps {
	return &Steps{turns: turns}
}

// Fixed makes a step of a turn that does not depend on the request.
func Fixed(t Turn) func(*Request) Turn { return func(*Request) Turn { return t } }

// Next answers r with the next step.
func (s *Steps) Next(r *Request) Turn {
	s.mu.Lock()
	i := min(s.n, len(s.turns)-1)
	s.n++
	s.mu.Unlock()
	if i < 0 {
		return Text("done")
	}
	return s.turns[i](r)
}

// Taken is how many steps were asked for.
func (s *Steps) Taken() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}
