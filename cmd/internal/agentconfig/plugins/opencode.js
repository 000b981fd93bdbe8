// ledger: plugin written by `ledger hooks install --agent {{.Agent}}`; `ledger hooks uninstall --agent {{.Agent}}` removes it.
// {{.Created}}
//
// It gives {{.Name}} ledger's memory: at a session's first model request it
// asks ledger for the session-start context (resume context, or the offer of
// the project's latest work in another agent) and adds it to the system
// prompt; before a compaction ledger writes a handoff; when the session goes
// idle, and after a compaction, ledger reads what is new in the session.
// Each event runs `ledger hook --agent {{.Agent}}` with the event as JSON on
// its stdin (see `ledger hook --help`), within a timeout. A ledger that is
// missing, slow or failing changes nothing in {{.Name}}: every error is
// swallowed.
import { spawn } from "node:child_process"
import { existsSync } from "node:fs"

// The ledger binary that installed this plugin; "ledger" on PATH if it is gone.
const LEDGER = {{.Ledger}}
const ARGS = {{.Args}}
const AGENT = {{.AgentJS}}
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
    }, TIMEOUT[payload.hook_event_name] ?? 15000)
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

export const LedgerPlugin = async ({ directory }) => {
  // Per session: the promise of its start context, asked once, and how the
  // next one starts ("compact" after a compaction).
  const context = new Map()
  const source = new Map()
  const start = async (sessionID) => {
    const out = await hook({
      hook_event_name: "SessionStart",
      session_id: sessionID,
      cwd: directory,
      source: source.get(sessionID) ?? "",
    })
    source.delete(sessionID)
    const text = out?.hookSpecificOutput?.additionalContext
    return typeof text === "string" ? text : ""
  }
  return {
    "experimental.chat.system.transform": async (input, output) => {
      try {
        const id = input?.sessionID
        if (!id || !Array.isArray(output?.system)) return
        if (!context.has(id)) context.set(id, start(id))
        const text = await context.get(id)
        if (text) output.system.push(text)
      } catch {}
    },
    "experimental.session.compacting": async (input) => {
      try {
        if (input?.sessionID) await hook({ hook_event_name: "PreCompact", session_id: input.sessionID, cwd: directory, trigger: "auto" })
      } catch {}
    },
    event: async ({ event }) => {
      try {
        const id = event?.properties?.sessionID
        if (!id) return
        if (event.type === "session.compacted") {
          context.delete(id)
          source.set(id, "compact")
          await hook({ hook_event_name: "PostCompact", session_id: id, cwd: directory })
        } else if (event.type === "session.idle") {
          await hook({ hook_event_name: "Stop", session_id: id, cwd: directory })
        }
      } catch {}
    },
  }
}
