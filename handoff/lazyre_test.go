package handoff

import (
	"regexp"
	"testing"
)

// TestRegexpsCompile compiles every lazy regular expression, as
// MustCompile at package initialisation used to: a bad one fails here, not
// in a user's handoff.
func TestRegexpsCompile(t *testing.T) {
	if len(allRegexps) < 50 {
		t.Fatalf("%d lazy regular expressions registered, want the package's (about 100)", len(allRegexps))
	}
	for _, l := range allRegexps {
		if _, err := regexp.Compile(l.expr); err != nil {
			t.Errorf("%q: %v", l.expr, err)
		}
	}
}
