package transcript

import "encoding/json"

// detectCLIAgent tells the logs of Gemini CLI, Qwen Code and Copilot CLI
// from one of their lines (a JSON object), or "" when the line is none of
// theirs. It runs before the Claude and Codex rules: a Qwen record has
// Claude's "type": "user" and "uuid", and a Gemini message Claude's "type":
// "user" too.
//
//	Gemini CLI   the header {"sessionId", "projectHash", ...}, a patch
//	             {"$set": ...} or {"$rewindTo": ...}, a message
//	             {"id", "type": "user"|"gemini", "content"} (no "uuid")
//	Qwen Code    {"uuid", "sessionId", "type", ...} whose "message" holds
//	             Gemini-style "parts", or whose type is "tool_result", or a
//	             system record with a "systemPayload"
//	Copilot CLI  {"type": "<area>.<event>", "data": {...}, "id", ...}
func detectCLIAgent(line []byte) Format {
	var d struct {
		Type        string          `json:"type"`
		SessionID   present         `json:"sessionId"`
		ProjectHash present         `json:"projectHash"`
		Set         present         `json:"$set"`
		RewindTo    present         `json:"$rewindTo"`
		ID          present         `json:"id"`
		UUID        present         `json:"uuid"`
		Content     present         `json:"content"`
		Data        json.RawMessage `json:"data"`
		Payload     present         `json:"payload"`
		Message     *struct {
			Parts present `json:"parts"`
		} `json:"message"`
		SystemPayload present `json:"systemPayload"`
	}
	if err := json.Unmarshal(line, &d); err != nil {
		return ""
	}
	switch {
	case bool(d.SessionID && d.ProjectHash) && d.Type == "":
		return FormatGemini
	case bool(d.Set || d.RewindTo) && d.Type == "" && !bool(d.UUID):
		return FormatGemini
	case (d.Type == "gemini" || d.Type == "user") && bool(d.ID && d.Content) && !bool(d.UUID || d.SessionID):
		return FormatGemini
	case bool(d.UUID && d.SessionID) && (d.Message != nil && bool(d.Message.Parts) || d.Type == "tool_result" ||
		d.Type == "system" && bool(d.SystemPayload)):
		return FormatQwen
	case copilotEventType(d.Type) && len(d.Data) > 0 && d.Data[0] == '{' && bool(d.ID) && !bool(d.Payload):
		return FormatCopilot
	}
	return ""
}

// copilotEventType tells whether t is shaped like a Copilot CLI event
// type: "session.start", "assistant.message", "tool.execution_complete".
func copilotEventType(t string) bool {
	for i := 1; i < len(t)-1; i++ {
		if t[i] == '.' {
			return true
		}
	}
	return false
}
