// ledger: plugin written by `ledger hooks install --agent pi`; `ledger hooks uninstall --agent pi` removes it.
// {{.Created}}
//
// It gives Pi ledger's memory: before the first prompt of a session (and the
// first after a compaction) it asks ledger for the session-start context
// (resume context, or the offer of the project's latest work in another
// agent) and adds it as a message; before a compaction ledger writes a
// handoff; when the agent ends a prompt, after a compaction and at shutdown,
// ledger reads what is new in the session file. Each event runs `ledger hook
// --agent pi` with the event as JSON on its stdin (see `ledger hook --help`),
// within a timeout. A ledger that is missing, slow or failing changes nothing
// in Pi: every error is swallowed.
import { spawn } from "node:child_process"
import { existsSync } from "node:fs"

// The ledger binary that installed this extension; "ledger" on PATH if it is gone.
const LEDGER = {{.Ledger}}
const ARGS = {{.Args}}
const AGENT = "pi"
// Milliseconds an event's hook may take before it is killed.
const TIMEOUT = {{.Timeouts}}

function hook(payload) {
  return new Promise((resolve) => {
    let child
    let out = ""
    let settled = false
    let timer
    const done = (value) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resolve(value)
    }
    try {
      child = spawn(existsSync(LEDGER) ? LEDGER : "ledger", ARGS, { stdio: ["pipe", "pipe", "ignore"] })
    } catch {
      return resolve(null)
    }
    timer = setTimeout(() => {
      try {
        child.kill("SIGKILL")
      } catch {}
      done(null)
    }, TIMEOUT[String(payload.hook_event_name)] ?? 15000)
    child.on("error", () => done(null))
    child.stdout.on("data", (chunk) => {
      if (out.length < 4 << 20) out += chunk
    })
    child.on("close", () => {
      try {
        done(out.trim() ? JSON.parse(out) : null)
      } catch {
        done(null)
      }
    })
    child.stdin.on("error", () => {})
    child.stdin.end(JSON.stringify({ agent: AGENT, ...payload }))
  })
}

export default function (pi) {
  // How the next prompt starts: set at session start and after a compaction,
  // used (and cleared) by the first prompt after it.
  let pending
  const facts = (ctx) => ({
    session_id: ctx.sessionManager.getSessionId(),
    transcript_path: ctx.sessionManager.getSessionFile() ?? "",
    cwd: ctx.cwd,
  })
  pi.on("session_start", async (event, ctx) => {
    try {
      if (event?.reason === "reload") return
      const replied = ctx.sessionManager
        .getEntries()
        .some((e) => e?.type === "message" && e.message?.role === "assistant")
      pending = event?.reason === "new" ? "clear" : replied ? "resume" : "startup"
    } catch {}
  })
  pi.on("before_agent_start", async (_event, ctx) => {
    try {
      if (!pending) return
      const source = pending
      pending = undefined
      const out = await hook({ hook_event_name: "SessionStart", source, ...facts(ctx) })
      const text = out?.hookSpecificOutput?.additionalContext
      if (typeof text !== "string" || !text) return
      return { message: { customType: "ledger", content: text, display: false } }
    } catch {}
  })
  // The last entry of the branch last compacted. Pi 0.73.1 may compact one
  // branch twice: the check when a prompt ends and the one before the next
  // prompt race, both prepare from the same branch and fire
  // session_before_compact. One point of the session is one compaction:
  // ledger hears of the first only.
  let compacted
  pi.on("session_before_compact", async (event, ctx) => {
    try {
      const branch = event?.branchEntries
      const point = Array.isArray(branch) && branch.length > 0 ? branch[branch.length - 1]?.id : undefined
      if (point && point === compacted) return
      compacted = point
      const instructions = event?.customInstructions
      await hook({
        hook_event_name: "PreCompact",
        trigger: instructions ? "manual" : "auto",
        ...(instructions ? { custom_instructions: instructions } : {}),
        ...facts(ctx),
      })
    } catch {}
  })
  pi.on("session_compact", async (_event, ctx) => {
    try {
      pending = "compact"
      await hook({ hook_event_name: "PostCompact", ...facts(ctx) })
    } catch {}
  })
  pi.on("agent_end", async (_event, ctx) => {
    try {
      await hook({ hook_event_name: "Stop", ...facts(ctx) })
    } catch {}
  })
  pi.on("session_shutdown", async (event, ctx) => {
    try {
      await hook({ hook_event_name: "SessionEnd", reason: String(event?.reason ?? ""), ...facts(ctx) })
    } catch {}
  })
}
