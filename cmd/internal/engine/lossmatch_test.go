package engine

import "testing"

func TestLossMatchFiles(t *testing.T) {
	t.Parallel()
	summary := newLossText("Modified `lib/app/session_live.ex` and router.ex; the new pkg/auth/store.go.orig backup " +
		"and xclock.go stay. Also touched auth/store.go. See config/test.exs.")
	for _, tc := range []struct {
		path   string
		shared bool
		want   bool
	}{
		{"/home/u/app/lib/app/session_live.ex", false, true}, // path under the project
		{"/home/u/app/lib/web/router.ex", false, true},       // base name
		{"/home/u/app/clock.go", false, false},               // xclock.go is another file
		{"/home/u/app/pkg/auth/store.go", true, true},        // shared base name, named with its folder
		{"/home/u/app/pkg/db/store.go", true, false},         // shared base name, folder not named
		{"/home/u/app/config/test.exs", false, true},         // before a full stop
		{"/home/u/app/test.ex", false, false},                // test.exs is not test.ex
		{"/home/u/app/live.ex", false, false},                // session_live.ex is not live.ex
	} {
		if got := summary.coversFile(tc.path, "/home/u/app", tc.shared); got != tc.want {
			t.Errorf("coversFile(%s, shared %v) = %v, want %v", tc.path, tc.shared, got, tc.want)
		}
	}
}

func TestLossMatchTasks(t *testing.T) {
	t.Parallel()
	summary := newLossText("Done: gqc.4 and gqc.5. Now on spotter-gqc.6; item 3 of the todo list is open.")
	for _, tc := range []struct {
		id, subject string
		want        bool
	}{
		{"spotter-gqc.6", "Close review session", true},          // full id
		{"spotter-gqc.5", "Project review page", true},           // id without its project prefix
		{"spotter-gqc.7", "Launch review conversation", false},   // neither id nor subject
		{"spotter-gqc", "Annotations epic", false},               // gqc.6 does not name gqc
		{"3", "Write the changelog", false},                      // a bare number names nothing
		{"12", "item todo list open", true},                      // but its subject's words may
		{"spotter-gqc.61", "Something else entirely new", false}, // gqc.6 is not gqc.61
	} {
		if got := summary.coversTask(tc.id, tc.subject); got != tc.want {
			t.Errorf("coversTask(%q, %q) = %v, want %v", tc.id, tc.subject, got, tc.want)
		}
	}
}

func TestLossMatchWords(t *testing.T) {
	t.Parallel()
	summary := newLossText(`The user asked: "check again". Auto-generated migrations use ALTER TABLE modify, which SQLite
doesn't support for nullability changes, so they are rewritten with a table rewrite pattern. LiveView tests run
in a separate process and need the shared sandbox mode. The project, session, tests and files were reviewed.`)
	for _, tc := range []struct {
		item string
		want bool
	}{
		{"check again", true}, // a phrase
		{"check", true},       // a one-word phrase
		{"again check", false},
		{"The auto-generated migration uses ALTER TABLE ... modify which SQLite doesn't support for nullability changes", true},
		{"LiveView runs in a separate process: use the shared sandbox", true},
		{"review of session files for the tests project", false}, // its words are there, never side by side
		{"Use PostgreSQL advisory locks for the migrations", false},
	} {
		if got := summary.coversWords(tc.item); got != tc.want {
			w, p, n := summary.wordEvidence(tc.item)
			t.Errorf("coversWords(%q) = %v, want %v (words %.2f, pairs %.2f of %d)", tc.item, got, tc.want, w, p, n)
		}
	}
}

func TestLossMatchErrors(t *testing.T) {
	t.Parallel()
	summary := newLossText("Dialyzer still fails in otel_trace_helpers.ex: the pattern can never match.")
	for _, tc := range []struct {
		err  string
		want bool
	}{
		{"`git commit`: [DIALYZER] lib/web/otel_trace_helpers.ex:58:13: pattern_match — The pattern can never match the type.", true},
		{"go test ./pkg/auth: TestSessionExpiry failed (session_store_test.go:42)", false},
		{"mix test: otel_trace_helpers.ex:12 unrelated crash in a worker pool supervisor restart", false}, // named, but a third of its words are not there
	} {
		if got := summary.coversError(tc.err); got != tc.want {
			t.Errorf("coversError(%q) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

func TestStem(t *testing.T) {
	t.Parallel()
	for _, tc := range [][2]string{{"closing", "clos"}, {"closes", "clos"}, {"close", "clos"}, {"closed", "clos"},
		{"entries", "entry"}, {"go", "go"}, {"tests", "test"}, {"uses", "use"}} {
		if got := stem(tc[0]); got != tc[1] {
			t.Errorf("stem(%q) = %q, want %q", tc[0], got, tc[1])
		}
	}
}
