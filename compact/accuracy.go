package compact

import (
	"math"
	"slices"
	"strconv"
)

// Accuracy is how well an estimator predicts real token counts: each API
// response's content estimated against the output_tokens its usage reports.
// Errors are absolute relative errors as fractions (0.05 is 5%).
type Accuracy struct {
	// Messages is the number of API responses measured.
	Messages int `json:"messages"`
	// SkippedThinking counts responses left out for holding thinking blocks:
	// transcripts keep only a summary of the thinking (or none), while
	// output_tokens counts all of it.
	SkippedThinking int `json:"skipped_thinking"`
	// SkippedPartial counts responses left out because the usage recorded
	// with them is the stream's starting figure, not the final one (Claude
	// Code writes a response's lines as they stream and does not always
	// update the last line): fewer output tokens than the response's tool
	// calls could take, or than one per MaxCharsPerToken characters.
	SkippedPartial int `json:"skipped_partial"`
	// MedianAbsError and P90AbsError are the estimator's median and 90th
	// percentile absolute relative errors.
	MedianAbsError float64 `json:"median_abs_error"`
	P90AbsError    float64 `json:"p90_abs_error"`
	// BaselineMedianAbsError and BaselineP90AbsError are the same for
	// chars/4 (CharsEstimator), for comparison.
	BaselineMedianAbsError float64 `json:"baseline_median_abs_error"`
	BaselineP90AbsError    float64 `json:"baseline_p90_abs_error"`
}

// Thresholds below which a recorded usage cannot be a response's final
// output_tokens (see Accuracy.SkippedPartial). The smallest tool call in
// the corpus costs 57 tokens; the stream's starting figures seen there run
// from 1 to 26.
const (
	// MinToolCallTokens is less than any real tool call costs.
	MinToolCallTokens = 30
	// MaxCharsPerToken is more characters than any real token holds on
	// average over a response.
	MaxCharsPerToken = 8
)

// MeasureAccuracy measures est against the usage recorded in msgs. Lines of
// one response (same ResponseID) are measured together, with the last
// line's usage; assistant messages with usage but no ResponseID count as
// responses of their own. A nil est measures the default estimator.
func MeasureAccuracy(msgs []Message, est Estimator) Accuracy {
	return measureAccuracy(msgs, est, true)
}

// measureAccuracy is MeasureAccuracy with the partial-usage filter
// optional, so that tests can report what it changes.
func measureAccuracy(msgs []Message, est Estimator, skipPartial bool) Accuracy {
	if est == nil {
		est = DefaultEstimator()
	}
	var acc Accuracy
	var errs, baseErrs []float64
	for _, m := range MergeResponses(responsesOnly(msgs)) {
		out := m.Usage.OutputTokens
		calls, thinking := 0, false
		for _, b := range m.Blocks {
			switch b.Kind {
			case BlockThinking:
				thinking = true
			case BlockToolUse:
				calls++
			}
		}
		if thinking {
			acc.SkippedThinking++
			continue
		}
		partial := out < int64(calls*MinToolCallTokens) || out*MaxCharsPerToken < int64(messageChars(m))
		if out <= 0 || skipPartial && partial {
			acc.SkippedPartial++
			continue
		}
		errs = append(errs, relErr(est.MessageTokens(m), out))
		baseErrs = append(baseErrs, relErr(CharsEstimator{}.MessageTokens(m), out))
	}
	acc.Messages = len(errs)
	acc.MedianAbsError, acc.P90AbsError = Percentile(errs, 50), Percentile(errs, 90)
	acc.BaselineMedianAbsError, acc.BaselineP90AbsError = Percentile(baseErrs, 50), Percentile(baseErrs, 90)
	return acc
}

// responsesOnly keeps the assistant messages that carry usage, giving those
// without a ResponseID one of their own so that they are not merged.
func responsesOnly(msgs []Message) []Message {
	var out []Message
	for i, m := range msgs {
		if m.Role != RoleAssistant || m.Usage == nil {
			continue
		}
		if m.ResponseID == "" {
			m.ResponseID = "\x00line-" + strconv.Itoa(i)
		}
		out = append(out, m)
	}
	return out
}

func relErr(est int, real int64) float64 {
	return math.Abs(float64(int64(est)-real)) / float64(real)
}

// Percentile returns the p-th percentile of xs (0 < p <= 100) by the
// nearest-rank method, except that the 50th is the usual median (the mean
// of the middle two of an even count). It returns 0 for no values; xs is
// not modified.
func Percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if p == 50 {
		mid := len(s) / 2
		if len(s)%2 == 0 {
			return (s[mid-1] + s[mid]) / 2
		}
		return s[mid]
	}
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	return s[min(max(rank, 1), len(s))-1]
}
