package compact

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestCalibration checks the default estimator against the real usage in
// the corpus: the goal is a median absolute error of at most 15% on the
// two calibration files. Figures for every file are logged (go test -v).
func TestCalibration(t *testing.T) {
	tests := []struct {
		prefix    string
		maxMedian float64 // 0: informational only
	}{
		{"spotter-ae4a77f8", 0.15},
		{"ccviewer-fe5e1c67", 0.15},
		{"spotter-258c7280", 0},
		{"ccviewer-1af7fc5e", 0},
		{"spotter-tool_heavy", 0},
		{"spotter-subagent", 0},
	}
	for _, tt := range tests {
		t.Run(tt.prefix, func(t *testing.T) {
			msgs := readClaude(t, corpusFile(t, tt.prefix))
			got := MeasureAccuracy(msgs, NewEstimator())
			t.Logf("%s: %d responses (skipped %d thinking, %d partial usage); estimator median %.1f%% p90 %.1f%%; chars/4 median %.1f%% p90 %.1f%%",
				tt.prefix, got.Messages, got.SkippedThinking, got.SkippedPartial,
				100*got.MedianAbsError, 100*got.P90AbsError, 100*got.BaselineMedianAbsError, 100*got.BaselineP90AbsError)
			if testing.Verbose() {
				all := measureAccuracy(msgs, NewEstimator(), false)
				t.Logf("%s with partial usage kept: %d responses; estimator median %.1f%% p90 %.1f%%; chars/4 median %.1f%% p90 %.1f%%",
					tt.prefix, all.Messages, 100*all.MedianAbsError, 100*all.P90AbsError, 100*all.BaselineMedianAbsError, 100*all.BaselineP90AbsError)
			}
			if tt.maxMedian == 0 {
				return
			}
			if got.Messages < 100 {
				t.Errorf("measured %d responses, want at least 100", got.Messages)
			}
			if got.MedianAbsError > tt.maxMedian {
				t.Errorf("median abs error = %.3f, want <= %.3f", got.MedianAbsError, tt.maxMedian)
			}
			if got.MedianAbsError >= got.BaselineMedianAbsError {
				t.Errorf("median abs error %.3f is no better than chars/4's %.3f", got.MedianAbsError, got.BaselineMedianAbsError)
			}
		})
	}
}

// TestCalibrationCombined measures the two calibration files together, the
// set the constants were fitted on.
func TestCalibrationCombined(t *testing.T) {
	var msgs []Message
	for _, prefix := range []string{"spotter-ae4a77f8", "ccviewer-fe5e1c67"} {
		msgs = append(msgs, readClaude(t, corpusFile(t, prefix))...)
	}
	got := MeasureAccuracy(msgs, nil)
	t.Logf("both: %d responses; estimator median %.1f%% p90 %.1f%%; chars/4 median %.1f%% p90 %.1f%%",
		got.Messages, 100*got.MedianAbsError, 100*got.P90AbsError, 100*got.BaselineMedianAbsError, 100*got.BaselineP90AbsError)
	if got.MedianAbsError > 0.15 {
		t.Errorf("median abs error = %.3f, want <= 0.15", got.MedianAbsError)
	}
}

// TestCalibrationSubagents runs over the summarizer sidechains too, which
// hold one long response each; logged only.
func TestCalibrationSubagents(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(corpusDir(t), "claude", "*.subagents.*.jsonl"))
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name[:strings.Index(name, ".")], func(t *testing.T) {
			got := MeasureAccuracy(readClaude(t, f), nil)
			t.Logf("%s: %+v", name, got)
		})
	}
}
