// Package agenttest runs real coding agents (Claude Code, Codex CLI,
// Gemini CLI, Qwen Code, Copilot CLI, Pi, OpenCode, Kilo CLI) in tests, against a scripted model server of its own: the end-to-end tests
// (package e2e, below this one) install the pinned npm packages, give each
// session a fake HOME with ledger's hooks installed, and assert on what
// the hooks did, what the ledger holds, and what the model was sent. Only tests import
// it: it is never linked into the ledger binary (cmd/ledger's
// TestNothingUnusedLinked checks).
//
// # The pieces
//
//   - Server (server.go): an HTTP server on 127.0.0.1 and a free port. It
//     logs every request (Requests, Turns; Digest on a failed test;
//     $LEDGER_AGENTTEST_LOG=DIR writes each body there) and answers each
//     "turn" request from the test's Script.
//   - Request, Message, Tool, ToolResult (request.go): a request decoded
//     into one shape whatever the wire protocol, for scripts and
//     assertions (HasTool, LastUserText, Contains, Results).
//   - Turn, Call, Usage, Script, Rules, Steps (script.go): the model's
//     answers, protocol-neutral. A Turn is text and/or tool calls with the
//     token usage to report; a Script picks the Turn for a Request. Rules
//     route side requests (a compaction: IsClaudeCompaction,
//     IsCodexCompaction, IsGeminiCompression, IsQwenCompaction,
//     IsCopilotCompaction, IsPiCompaction, IsOpenCodeCompaction; Gemini
//     CLI's router: IsGeminiRouter; OpenCode's title: IsOpenCodeTitle)
//     away from
//     the Steps of the agent's own loop.
//   - Agent (agent.go): the pinned npm packages, installed once into
//     $LEDGER_AGENTS_DIR (default ledger/agents in the user's cache folder)
//     and reused; a missing client skips a test, or fails it with
//     LEDGER_REQUIRE_AGENTS=1 (CI). Cmd (run.go) runs one agent command
//     with a clean environment and a timeout that kills its process group.
//   - Per agent (agent_claude.go, agent_codex.go, agent_gemini.go,
//     agent_qwen.go, agent_copilot.go, agent_pi.go, agent_opencode.go):
//     the environment or config file that points it at the Server, and
//     how to tell its compaction request (OpenCode's: also its plugin
//     dependency, installed once and linked into each HOME).
//
// # Wire protocols
//
// Each wire protocol is one file implementing the unexported protocol
// interface (server.go): routes (the ServeMux patterns it answers), decode
// (an HTTP request into a Request: Kind, Model, Stream, System, Tools,
// Messages) and write (a Turn as the protocol's answer, streamed as
// server-sent events when the request asked for a stream). Today:
//
//	protocol_anthropic.go  Anthropic Messages: POST /v1/messages (also
//	                       ?beta=true), SSE message_start ... message_stop,
//	                       tool_use blocks with input_json_delta; and
//	                       /v1/messages/count_tokens
//	protocol_responses.go  OpenAI Responses: POST /v1/responses, SSE
//	                       response.created, response.output_item.done
//	                       (message, function_call, custom_tool_call),
//	                       response.completed with usage
//	protocol_chat.go       OpenAI Chat Completions (Qwen Code, Copilot
//	                       CLI, Pi, OpenCode, Kilo CLI): POST
//	                       /v1/chat/completions, SSE chunks with
//	                       delta.content and delta.tool_calls, the usage
//	                       in a last chunk when stream_options asks, then
//	                       [DONE]; a whole chat.completion when not
//	                       streamed; GET /v1/models
//	protocol_gemini.go     Gemini API (Gemini CLI): POST
//	                       /v1beta/models/{model}:streamGenerateContent
//	                       (?alt=sse: GenerateContentResponse events,
//	                       functionCall parts, usageMetadata),
//	                       :generateContent (one document: the router,
//	                       the compression), :countTokens
//
// # Adding a protocol
//
// To add another wire API (the steps the Chat Completions and Gemini
// files followed):
//
//  1. Write protocol_<name>.go with a type implementing protocol. Its
//     routes must not overlap the others' ("POST /v1/chat/completions";
//     for Gemini "POST /v1beta/models/{model}" with the method after a
//     colon in the last segment: match it in decode, and answer
//     ":streamGenerateContent" with ?alt=sse as a stream and
//     ":generateContent" as one JSON document).
//  2. In decode, fill the Request: Kind (KindTurn, or a kind of its own
//     for a request that is not a model turn, answered without the
//     script), Model, Stream, System (the system message or
//     systemInstruction), Tools (name, and Kind "function"), and Messages
//     in order, with Calls for the assistant's tool calls (tool_calls,
//     functionCall parts) and Results for tool results (role "tool"
//     messages, functionResponse parts), so that scripts and assertions
//     stay protocol-neutral.
//  3. In write, render the Turn: Text as the answer's text, each Call as
//     the protocol's tool call (Call.inputJSON gives the arguments as a
//     JSON object; make up an id when Call.ID is ""), and Usage as the
//     protocol's token counts (Chat Completions: prompt_tokens with
//     prompt_tokens_details.cached_tokens, completion_tokens, in a last
//     chunk when stream_options.include_usage is set; Gemini:
//     usageMetadata promptTokenCount, cachedContentTokenCount,
//     candidatesTokenCount). Streams go through sseWriter (event, and raw
//     for "data: [DONE]").
//  4. Add it to protocols() in server.go, and a test beside
//     server_test.go's that reads the stream as the agent's own client
//     does (an SDK when one is in go.mod, else the event shapes the
//     agent's source parses).
//  5. For each agent on it, add agent_<name>.go: its Agent entry in
//     agent.go's var block and Agents(), the environment or config that
//     points it at Server.URL(), and Is<Agent>Compaction reading its
//     compaction prompt from the agent's own source.
package agenttest
