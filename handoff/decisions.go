package handoff

import (
	"sort"
	"strings"
	"sync"
	"unicode"
)

// Decisions are what the next session must not undo or rediscover:
//   - notes recorded on purpose (`ledger note --decision`);
//   - answers the user gave to the agent's questions (AskUserQuestion);
//   - the user's corrections ("no, use X instead", "always ...");
//   - lines marked "decision:";
//   - what the agent itself established: a constraint it ran into ("SQLite
//     cannot alter a column's nullability"), the fix it chose and why ("a
//     macro, so callers can pass a do-block"), a convention of the project.
//
// The last kind is read from the agent's prose by the shape of its
// sentences, not by topic: a sentence that states a limit, a cause, a
// choice between alternatives or a rule, preferably right after something
// failed, and preferably naming code. The best of them are kept, in the
// order they were said.

// decision is one candidate.
type decision struct {
	text    string
	score   int
	seq     int
	words   map[string]bool
	setting bool // from a settings file, not from prose
	// about is the failure the sentence reacts to (its message index; -1
	// none) when it only diagnoses it: once that failure is fixed, the
	// diagnosis is stale.
	about int
}

// Scores of the explicit kinds: always kept, before inferred ones.
const (
	scoreNote       = 100
	scoreAnswer     = 90
	scoreCorrection = 80
	scoreMarked     = 70
	// scorePlanReason is a plan's explanation (Codex update_plan): kept
	// among the inferred decisions, before those read from prose.
	scorePlanReason = 8
	// minInferred is the score an inferred decision needs.
	minInferred = 4
	// maxInferred is how many decisions read from prose a handoff keeps.
	maxInferred = 6
)

// decisionCues score a sentence by its shape.
var decisionCues = []struct {
	re     *lazyRE
	weight int
}{
	// a choice between alternatives, both named
	{lazyRegexp(`(?i)\brather than\b|\binstead of\b|\bin favou?r of\b|\bgo(?:ing)? with\b|\bopt(?:ed)? for\b|\bdecid(?:e|ed|ing)\b|\bchose\b`), 4},
	// a choice
	{lazyRegexp(`(?i)\binstead(?:[.,;:!)]|$)|\bswitch(?:ed|ing)? (?:to|from)\b|\bchoose\b|\bprefer(?:red|s)?\b`), 3},
	// a limit of a tool, library or environment
	{lazyRegexp(`(?i)\b(?:doesn'?t|does not|can'?t|cannot|can not|won'?t|isn'?t|is not|aren'?t|are not|wasn'?t|was not|not)\s+(?:\w+\s+)?(?:support(?:ed)?|work|allow(?:ed)?|handle|access|accept|exist|available|compatible|picked up|recogni[sz]ed|respected|bypass(?:ed)?)\b|\bunsupported\b|\bonly works\b|\bstill (?:being )?(?:enforced|runs?|fails?|required|blocks?)\b|\beven with\b|\brequires?\b|\bmust be\b|\bhas to be\b|\bfalse positive\b`), 3},
	// a cause
	{lazyRegexp(`(?i)\b(?:the|this|root|real) (?:issue|problem|cause|reason|culprit|error|fix) (?:is|was|here is)\b|\bbecause\b|\bdue to\b|\bso (?:we|i) (?:need|must|have|should)\b|\b(?:which|this|that) means\b|\bneeds? to be\b`), 2},
	// a rule or convention
	{lazyRegexp(`(?i)\bconvention\b|\bpattern\b|\bestablished\b|\bby default\b|\balways\b|\bnever\b|\bmust (?:always|never|not|use|stay|keep)\b|\bshould (?:always|never|not)\b|\bthe (?:project|repo|codebase) (?:uses|requires|expects)\b|\bin this (?:repo|project|codebase)\b`), 2},
	// an approach
	{lazyRegexp(`(?i)\brewr(?:ite|ote|iting)\b|\bconvert(?:ed|ing)?\b.*\bto\b|\bmake it an?\b|\bturn(?:ed)? it into\b|\bconfigur(?:e|ed|ing)\b.*\bvia\b|\bvia (?:the )?(?:app|application|config|env|environment)\b|\bwork(?:ed)? around\b|\bworkaround\b`), 2},
}

var (
	// reAnnounce starts a sentence that only says what the agent does
	// next ("Let me fix…", "I need to also import X"): narration, unless
	// it gives a reason.
	reAnnounce = lazyRegexp(`(?i)^(?:(?:ok(?:ay)?|good|great|perfect|now|so|next|first|then|also)[,!.]?\s+)*(?:let me|let's|i'll|i will|i'm going to|i am going to|i need to|we need to|need to|i should|i have to|i must|time to)\b`)
	// reReason marks a sentence that says why: a cause, a constraint, a
	// choice between named options.
	reReason = lazyRegexp(`(?i)\bbecause\b|\bsince\b|\bso that\b|\binstead of\b|\brather than\b|\bdue to\b|\botherwise\b|\bwhich (?:means|is not|isn'?t|doesn'?t|does not|can'?t|cannot|won'?t|would)\b|\bthe (?:issue|problem|cause|reason) (?:is|was)\b|\bdoesn'?t support\b|\bnot supported\b`)
	// reAdvice starts a sentence that tells the user what they can do:
	// not a decision of the work.
	reAdvice = lazyRegexp(`(?i)^(?:if you(?:'d| would)? (?:want|like|need|prefer)|you (?:can|could|may|might|should)\b|to (?:do|use|run|enable|ensure) (?:this|that|it)\b|feel free\b)`)
	// reTentative marks a guess or an experiment: "let me try", "maybe".
	reTentative = lazyRegexp(`(?i)\btry(?:ing)?\b|\bmaybe\b|\bperhaps\b|\bmight\b|\bprobably\b|\bi (?:think|guess|suspect)\b|\bseems?\b|\blet me (?:check|see|look|verify|test)\b`)
	// reToUser marks a sentence addressed to the user.
	reToUser = lazyRegexp(`(?i)\byou(?:r|'ll|'re|'d)?\b`)
	// reReport marks a report of what just happened.
	reReport    = lazyRegexp(`(?i)\b(?:has|have) been\b|\b(?:is|are) now\b|^now (?:there|it|the|we|all)\b|^there (?:is|are) now\b`)
	reNarration = lazyRegexp(`(?i)^(?:let me|now let me|let's|now let's|i'll|i will|now i'll|first,|next,|good|great|perfect|excellent|awesome|all (?:\d+ )?tests|done|ok|okay|now the|now add|now update|now run|looking at|checking|reading|here'?s|i have|i've|i can see|i see|the (?:file|test|tests|build) (?:is|are|has|passed|pass))\b`)
	// reRemedy marks a sentence that says what to do, not only what broke.
	reRemedy    = lazyRegexp(`(?i)\b(?:need to|needs to|i'll|i will|let me|let's|use|using|switch|instead|rewrite|rather|should|must|make it|configure|via|by (?:adding|using|removing|moving|making|setting|passing))\b`)
	reAction    = lazyRegexp(`(?i)^(?:let me|let's|i'll|i will|i need to|we need to|so i|so we|instead|use |switch|fix(?:ed)? (?:it|this|that) by)`)
	reHow       = lazyRegexp(`(?i)\b(?:by|with|instead|to be|via|as an?|using|rather)\b`)
	reTransient = lazyRegexp(`(?i)\b(?:yet|anymore|for now|at the moment|right now)\b`)
	reCodeish   = lazyRegexp("`[^`]+`|\\b\\w+(?:\\.\\w+)+\\b|\\b[a-z]+_[a-z_]+\\b|\\b[A-Z][a-z]+[A-Z]\\w*\\b|/\\w+")
	reWord      = lazyRegexp(`[\pL\pN_]+`)
)

// scoreSentence scores one sentence of the agent's prose.
func scoreSentence(s string, afterFailure bool) int {
	st := &text{s: s}
	score := 0
	strong := false
	for _, c := range decisionCues {
		if c.re.matchText(st) {
			score += c.weight
			strong = strong || c.weight >= 3
		}
	}
	if score == 0 {
		return 0
	}
	t := st
	if trimmed := strings.TrimSpace(s); trimmed != s {
		t = &text{s: trimmed}
	}
	if reAdvice.matchText(t) || (reAnnounce.matchText(t) && !reReason.matchText(t)) {
		return 0
	}
	if strings.HasSuffix(t.s, ":") {
		score -= 3 // it introduces what follows (code, a list): half a thought
	}
	if reTentative.matchText(st) {
		score -= 2
	}
	if reToUser.matchText(st) {
		score -= 2 // explained to the user, not decided for the work
	}
	if reReport.matchText(st) {
		score -= 2 // what happened, not why
	}
	if afterFailure {
		score++
	}
	if reCodeish.matchText(st) {
		score++
	}
	if reNarration.matchText(st) && !strong {
		score -= 3
	}
	if strings.HasSuffix(strings.TrimSpace(s), "?") {
		score -= 3
	}
	if reTransient.matchText(st) {
		score -= 2 // "doesn't exist yet": a state of the moment, not a rule
	}
	if n := len([]rune(s)); n > 320 {
		score -= 2
	} else if n < 30 {
		score -= 2
	}
	return score
}

type decisionSet struct {
	list []decision
}

func (d *decisionSet) add(text string, score, seq int) {
	text = itemText(text)
	if text == "" {
		return
	}
	words := wordSet(text)
	for i, o := range d.list {
		if similar(words, o.words) {
			// The same point made again: keep the newer wording, the higher
			// score, and move it last so the caller can annotate it.
			// It keeps its place in the order things were said.
			if score >= o.score || seq > o.seq {
				o = decision{text: text, score: max(score, o.score), seq: o.seq, words: words, about: o.about}
			}
			d.list = append(append(d.list[:i:i], d.list[i+1:]...), o)
			return
		}
	}
	d.list = append(d.list, decision{text: text, score: score, seq: seq, words: words, about: -1})
}

// forgetFixed drops diagnoses of failures that are fixed since: they read
// as if the failure were still there.
func (d *decisionSet) forgetFixed(open func(seq int) bool) {
	kept := d.list[:0]
	for _, x := range d.list {
		if x.about < 0 || open(x.about) {
			kept = append(kept, x)
		}
	}
	d.list = kept
}

// prose reads the agent's text for decisions it established. failure is
// the message index of the failure it reacts to, -1 when it does not.
func (d *decisionSet) prose(text string, seq int, failure int) {
	afterFailure := failure >= 0
	for _, p := range paragraphs(text) {
		sentences := splitSentences(p.text)
		scored := -1 // the index whose score is in nextScore: each sentence is scored once
		nextScore := 0
		for i := 0; i < len(sentences); i++ {
			s := strings.TrimSpace(sentences[i])
			score := nextScore
			if scored != i {
				score = scoreSentence(s, afterFailure)
			}
			if p.item {
				score-- // a report's bullet: what was done more than why
			}
			if score <= 0 {
				continue
			}
			// A cause is best kept with the action that follows it:
			// "X doesn't support Y. I need to rewrite it with Z."
			if i+1 < len(sentences) {
				next := strings.TrimSpace(sentences[i+1])
				ns := scoreSentence(next, afterFailure)
				scored, nextScore = i+1, ns
				if (ns > 0 || substantiveAction(next)) && len([]rune(s))+len([]rune(next)) <= 300 {
					s, score = s+" "+next, max(score, ns)+1
					if ns <= 0 && reTentative.MatchString(next) {
						score -= 2 // "X seems off. Let me try Y": a guess
					}
					i++
				}
			}
			if score >= minInferred {
				d.add(strings.TrimSuffix(s, ":"), score, seq)
				if afterFailure && !reRemedy.MatchString(s) {
					d.list[len(d.list)-1].about = failure
				} else {
					d.list[len(d.list)-1].about = -1
				}
			}
		}
	}
}

// para is a paragraph of prose; item marks a list item.
type para struct {
	text string
	item bool
}

// substantiveAction tells an action that says how ("rewrite it to be a
// macro", "configure it via the app environment") from one that only says
// what comes next ("let me fix this").
func substantiveAction(s string) bool {
	return reAction.MatchString(s) && len(s) >= 25 &&
		(reCodeish.MatchString(s) || reHow.MatchString(s))
}

// paragraphs splits prose into paragraphs of plain text: no code blocks,
// no headings, no tables; each list item is one.
func paragraphs(text string) []para {
	var out []para
	var cur []string
	item := false
	fence := false
	flush := func() {
		if len(cur) > 0 {
			out = append(out, para{strings.Join(cur, " "), item})
			cur, item = nil, false
		}
	}
	for _, line := range strings.Split(clean(text), "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fence = !fence
			flush()
			continue
		}
		if fence || t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "|") {
			flush()
			continue
		}
		if reListMarker.MatchString(t) {
			flush()
			t, item = undecorate(t), true
		}
		cur = append(cur, t)
	}
	flush()
	return out
}

// result keeps every explicit decision, then the best inferred ones (the
// settings of the files changed most recently, and the agent's own
// statements picked for score and variety), in the order they were made.
func (d *decisionSet) result() []string {
	var explicit, settings, prose []decision
	for _, x := range d.list {
		switch {
		case x.score >= scoreMarked:
			explicit = append(explicit, x)
		case x.setting:
			settings = append(settings, x)
		default:
			prose = append(prose, x)
		}
	}
	sort.SliceStable(explicit, func(i, j int) bool {
		if explicit[i].score != explicit[j].score {
			return explicit[i].score > explicit[j].score
		}
		return explicit[i].seq < explicit[j].seq
	})
	inferred := append(settings, pickVaried(prose, maxInferred)...)
	sort.SliceStable(inferred, func(i, j int) bool { return inferred[i].seq < inferred[j].seq })
	var out []string
	for _, x := range append(explicit, inferred...) {
		out = append(out, x.text)
	}
	return out
}

// pickVaried picks up to n candidates by score, each candidate losing two
// points for every one already picked that makes much the same point: a
// session that fought one problem for an hour says the same thing ten ways.
func pickVaried(cands []decision, n int) []decision {
	var picked []decision
	used := make([]bool, len(cands))
	for len(picked) < n {
		best, bestScore := -1, 0
		for i, c := range cands {
			if used[i] {
				continue
			}
			score := c.score
			for _, p := range picked {
				if overlaps(c.words, p.words) {
					score -= 2
				}
			}
			if best < 0 || score > bestScore || (score == bestScore && c.seq > cands[best].seq) {
				best, bestScore = i, score
			}
		}
		if best < 0 || bestScore < minInferred-2 {
			break
		}
		used[best] = true
		picked = append(picked, cands[best])
	}
	return picked
}

// overlaps tells whether two candidates share much of their content words.
func overlaps(a, b map[string]bool) bool {
	shared, small := 0, min(len(a), len(b))
	for w := range a {
		if b[w] && !stopWords()[w] {
			shared++
		}
	}
	return small > 0 && shared*10 >= small*3
}

// stopWords carry no topic.
var stopWords = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"the": true, "and": true, "that": true, "this": true, "with": true, "for": true,
		"let": true, "need": true, "issue": true, "not": true, "but": true, "are": true, "was": true, "have": true,
		"has": true, "its": true, "it's": true, "from": true, "into": true, "now": true, "all": true, "can": true,
		"will": true, "use": true, "also": true, "then": true, "which": true, "when": true, "because": true, "since": true}
})

func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range reWord.FindAllString(strings.ToLower(s), -1) {
		if len(w) > 2 {
			m[w] = true
		}
	}
	return m
}

// similar tells whether two sentences make the same point: most of the
// smaller one's words are in the other.
func similar(a, b map[string]bool) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	small, big := a, b
	if len(small) > len(big) {
		small, big = big, small
	}
	shared := 0
	for w := range small {
		if big[w] {
			shared++
		}
	}
	return shared*10 >= len(small)*7
}

var (
	reAnswerPair   = lazyRegexp(`"((?:[^"\\]|\\.)+)"="((?:[^"\\]|\\.)*)"`)
	reAnswerPrefix = lazyRegexp(`^(?:User has answered your questions?|Your questions? (?:has|have) been answered):`)
)

// answers reads AskUserQuestion's result: question → answer pairs.
func answers(text string) []string {
	t := strings.TrimSpace(text)
	if !reAnswerPrefix.MatchString(t) {
		return nil
	}
	var out []string
	for _, m := range reAnswerPair.FindAllStringSubmatch(t, -1) {
		q := strings.ReplaceAll(m[1], `\"`, `"`)
		a := strings.ReplaceAll(m[2], `\"`, `"`)
		if a == "" {
			continue
		}
		out = append(out, shorten(oneLine(q), 160)+" → "+shorten(oneLine(a), 200))
	}
	return out
}

// abbreviations end in a period that does not end a sentence.
var abbreviations = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"e.g": true, "i.e": true, "etc": true, "vs": true, "eg": true, "ie": true,
		"cf": true, "approx": true, "incl": true, "e": true, "g": true, "i": true}
})

// splitSentences splits a paragraph after ".", "!" or "?" followed by a
// space and a capital (or the end), never inside `code` and never after
// an abbreviation or in an ellipsis followed by lower case.
func splitSentences(para string) []string {
	var out []string
	r := []rune(para)
	start, code := 0, false
	for i := 0; i < len(r); i++ {
		switch r[i] {
		case '`':
			code = !code
			continue
		case '.', '!', '?':
		default:
			continue
		}
		if code {
			continue
		}
		j := i
		for j+1 < len(r) && strings.ContainsRune(".!?)\"'”’", r[j+1]) {
			j++
		}
		if j+1 < len(r) && !(r[j+1] == ' ' && j+2 < len(r) && startsSentence(r[j+2])) {
			i = j
			continue
		}
		if r[i] == '.' {
			w := i
			for w > start && (unicode.IsLetter(r[w-1]) || r[w-1] == '.') {
				w--
			}
			if abbreviations()[strings.ToLower(string(r[w:i]))] {
				i = j
				continue
			}
		}
		out = append(out, strings.TrimSpace(string(r[start:j+1])))
		start, i = j+1, j
	}
	if rest := strings.TrimSpace(string(r[start:])); rest != "" {
		out = append(out, rest)
	}
	return out
}

func startsSentence(c rune) bool {
	return unicode.IsUpper(c) || unicode.IsDigit(c) || strings.ContainsRune("`\"'“(*[", c)
}
