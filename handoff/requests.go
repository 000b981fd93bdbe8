package handoff

import (
	"encoding/json"
	"strings"
	"sync"
	"unicode/utf8"
)

// Every request the user made, in order: typed prompts, short follow-ups
// ("continue until all are done"), prompts typed while the agent was busy
// (the transcript reader turns those into user messages), slash commands
// that ask for work, and the feedback given when rejecting a tool call.
// Text the agent or its tools injected (command output, hook output,
// system reminders, skill bodies, notifications) is not a request.

// Prefixes of user-role text the agent injected rather than the user
// typed: command plumbing, hook output, environment blocks, notices.
var injected = []string{"<command-", "<local-command", "Caveat:", "<system-reminder>", "[Request interrupted",
	"<task-notification>", "<bash-input>", "<bash-stdout>", "<bash-stderr>", "<user-prompt-submit-hook>",
	"<environment_context>", "<user_instructions>", "<INSTRUCTIONS>", "# AGENTS.md instructions", "<turn_aborted>",
	"<user_shell_command>", "<permissions instructions>", "This session is being continued from a previous conversation",
	"Base directory for this skill:", "<cross-session-message", "<skill>", "<subagent_notification>",
	"<bash-notification>", "Unknown slash command:", "<local-command-stdout>", "<hook_context>",
	"The user wants to clarify these questions"}

// Slash commands that manage the session rather than ask for work.
var housekeeping = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"/compact": true, "/clear": true, "/context": true, "/cost": true, "/model": true,
		"/config": true, "/help": true, "/login": true, "/logout": true, "/resume": true, "/memory": true, "/status": true,
		"/doctor": true, "/exit": true, "/quit": true, "/permissions": true, "/hooks": true, "/mcp": true, "/agents": true,
		"/ide": true, "/vim": true, "/theme": true, "/terminal-setup": true, "/add-dir": true, "/export": true,
		"/release-notes": true, "/bashes": true, "/usage": true, "/rewind": true, "/statusline": true,
		"/privacy-settings": true, "/upgrade": true, "/output-style": true, "/todos": true, "/plugin": true,
		"/tasks": true, "/fork": true, "/rename": true, "/copy": true, "/keybindings": true}
})

var (
	reCommandName = lazyRegexp(`<command-name>\s*([^<]*?)\s*</command-name>`)
	reCommandArgs = lazyRegexp(`(?s)<command-args>(.*?)</command-args>`)
)

// userRequest returns text as a user request, or "" when it is not one.
// A slash command with arguments ("/orchestrator build a TODO app") is a
// request; /compact and its kind are not. Long requests are shortened in
// the middle: the end is where constraints usually are.
func userRequest(text string) string {
	text = clean(text)
	if text == "" {
		return ""
	}
	if m := reCommandName.FindStringSubmatch(text); m != nil && strings.HasPrefix(text, "<command-") {
		name := m[1]
		if !strings.HasPrefix(name, "/") {
			name = "/" + name
		}
		if housekeeping()[name] {
			return ""
		}
		if a := reCommandArgs.FindStringSubmatch(text); a != nil && strings.TrimSpace(a[1]) != "" {
			return shortenMiddle(name+" "+strings.TrimSpace(a[1]), maxRequest)
		}
		return name
	}
	if isInjected(text) || housekeeping()[strings.Fields(text)[0]] && len(strings.Fields(text)) == 1 || acknowledgement(text) ||
		machineOutput(text) {
		return ""
	}
	return shortenMiddle(text, maxRequest)
}

// machineOutput tells a message that is a JSON object and nothing else:
// a notification a tool or a background task delivered ({"task_id": …}),
// not words the user typed (a user pasting JSON says what to do with it).
func machineOutput(text string) bool {
	return strings.HasPrefix(text, "{") && strings.HasSuffix(text, "}") && json.Valid([]byte(text))
}

// acks are replies that only answer or wave on ("1", "yes", "go on"):
// without the question they answer they tell a fresh session nothing.
var acks = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"y": true, "yes": true, "yep": true, "yeah": true, "ok": true, "okay": true, "k": true,
		"sure": true, "go": true, "go on": true, "go ahead": true, "continue": true, "resume": true, "proceed": true,
		"next": true, "done": true, "thanks": true, "thank you": true, "ty": true, "please": true, "yes please": true,
		"do it": true, "both": true, "all": true, "all of them": true, "n": true, "no": true, "nope": true}
})

// acknowledgement tells a reply that is only an answer to a question
// (a number, a letter, "yes") or a go-ahead.
func acknowledgement(text string) bool {
	t := strings.ToLower(strings.Trim(text, " \t\n.!?,:;'\"()"))
	if len(t) > 16 {
		return false
	}
	if t == "" || acks()[t] {
		return true
	}
	for _, c := range t {
		if !(c >= '0' && c <= '9' || c == ' ' || c == ',' || c == '.') {
			return len([]rune(t)) == 1 // a letter: option a, b, c
		}
	}
	return true // 1, 2, 3 or 1, 3
}

func isInjected(text string) bool {
	for _, p := range injected {
		if strings.HasPrefix(text, p) {
			return true
		}
	}
	return false
}

// rejectMessages start a tool result that says the user refused the call:
// it did not run, so it neither failed nor changed anything.
var rejectMessages = []string{"The user doesn't want to proceed with this tool use",
	"The user doesn't want to take this action", "[Request interrupted by user", "User rejected tool use",
	"but you haven't granted it yet", "Permission to use"}

func rejected(text string) bool {
	t := strings.TrimSpace(text)
	for _, p := range rejectMessages {
		if strings.HasPrefix(t, p) || (strings.Contains(t, p) && len(t) < 600) {
			return true
		}
	}
	return false
}

// reRejectFeedback is what the user typed when refusing a call.
var reRejectFeedback = lazyRegexp(`(?s)the user said:\s*\n(.+)$`)

// rejectFeedback returns what the user said when refusing a tool call.
func rejectFeedback(text string) string {
	if m := reRejectFeedback.FindStringSubmatch(text); m != nil && rejected(text) {
		return strings.TrimSpace(m[1])
	}
	return ""
}

var reSentenceStart = lazyRegexp(`[.!?]\s+\p{Lu}`)

// shortenMiddle cuts s to at most max runes by dropping its middle: the
// head says what is asked, the tail often holds the constraints.
func shortenMiddle(s string, max int) string {
	if max <= 0 || utf8.RuneCountInString(s) <= max {
		return s
	}
	s = strings.TrimSpace(s)
	if max < 20 {
		return shorten(s, max)
	}
	r := []rune(s)
	headLen := (max - 3) * 3 / 5
	tailLen := max - 3 - headLen
	head := strings.TrimRight(string(r[:headLen]), " \t\n")
	tail := strings.TrimLeft(string(r[len(r)-tailLen:]), " \t\n")
	// Cut at word boundaries when one is near.
	if sp := strings.LastIndexAny(head, " \n"); sp > len(head)*3/4 {
		head = head[:sp]
	}
	// Start the tail at a sentence when one starts early in it, else at a word.
	if m := reSentenceStart.FindStringIndex(tail); m != nil && m[0] < len(tail)/3 {
		tail = tail[m[0]+1:]
	} else if sp := strings.IndexAny(tail, " \n"); sp >= 0 && sp < len(tail)/4 {
		tail = tail[sp+1:]
	}
	tail = strings.TrimLeft(tail, " ")
	return head + " […] " + tail
}

// reCorrection starts a request that corrects or constrains the agent: it
// is also a decision the next session must keep.
var reCorrection = lazyRegexp(`(?i)^(?:no[,.!:]|no\s+(?:don'?t|do not|use|need|that|this|we|you|it's|its)\b|nope\b|don'?t\b|do not\b|never\b|always\b|instead\b|actually[,\s]|wait[,\s]|stop\b|please (?:don'?t|do not|never|always|use|keep)\b|keep\b.*\b(?:as is|unchanged)\b|make sure\b|from now on\b|going forward\b|prefer\b|avoid\b|we (?:should|must|need to) (?:use|keep|not)\b)|\binstead of\b|\brather than\b`)

// isCorrection tells whether a request corrects or constrains the agent.
func isCorrection(req string) bool {
	return reCorrection.MatchString(strings.TrimSpace(req))
}

// TitleRunes is how long a title made from a request may be.
const TitleRunes = 80

// RequestTitle is a session title made from a user message's text when
// the agent gives the session none: the text if it is a request the user
// typed (not injected context, a housekeeping command or a bare "yes"),
// on one line and cut at its end to TitleRunes; "" when it is not one.
func RequestTitle(text string) string {
	r := userRequest(text)
	if r == "" {
		return ""
	}
	// userRequest shortened a long one in its middle: a title keeps its head.
	if utf8.RuneCountInString(text) > maxRequest {
		r = clean(text)
	}
	return shorten(oneLine(r), TitleRunes)
}
