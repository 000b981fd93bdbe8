package compact

import (
	"testing"
)

// TestCalibration checks the default estimator against the real usage in
// the corpus: on the two calibration files, the median and p90 absolute
// errors docs/performance.md states (rounded up to the next
// tenth of a percent; the estimator is deterministic). Figures for every
// file are logged (go test -v).
func TestCalibration(t *testing.T) {
	tests := []struct {
		prefix            string
		maxMedian, maxP90 float64 // 0: informational only
	}{
		{"spotter-ae4a77f8", 0.030, 0.077},  // docs/performance.md: 2.9% / 7.6%
		{"ccviewer-fe5e1c67", 0.037, 0.100}, // docs/performance.md: 3.6% / 9.9%
		{"spotter-258c7280", 0, 0},
		{"ccviewer-1af7fc5e", 0, 0},
		{"spotter-tool_heavy", 0, 0},
		{"spotter-subagent", 0, 0},
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
			if got.MedianAbsError > tt.maxMedian || got.P90AbsError > tt.maxP90 {
				t.Errorf("median / p90 abs error = %.3f / %.3f, want at most %.3f / %.3f", got.MedianAbsError, got.P90AbsError, tt.maxMedian, tt.maxP90)
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
	// docs/performance.md: 3.3% / 8.1%.
	if got.MedianAbsError > 0.034 || got.P90AbsError > 0.082 {
		t.Errorf("median / p90 abs error = %.3f / %.3f, want at most 0.034 / 0.082", got.MedianAbsError, got.P90AbsError)
	}
}
