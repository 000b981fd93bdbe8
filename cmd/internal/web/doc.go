// Package web is ledger's local web view (`ledger serve`): server-rendered
// pages of the sessions, each session's context over time with its
// compactions and handoffs, each compaction's loss report, search and
// audit. It reads through the engine, as the command line does, and only
// reads: every route is a GET, and the command opens the store read-only.
//
// Everything it serves is embedded in the binary (templates, one style
// sheet, one small script, plots drawn as SVG on the server): no CDN, no
// request leaves the machine. Transcript text is untrusted: html/template
// escapes all of it, and a Content-Security-Policy that allows only the
// server's own script and style keeps anything that slipped through inert.
package web
