// Package gitrepo reads what a handoff and resume need of a git checkout
// (its top folder, the repository it belongs to, its worktrees, branch and
// HEAD commit) from the files under .git, without running git: resume runs
// at every agent session start, and a git process would cost more than the
// rest of it.
package gitrepo
