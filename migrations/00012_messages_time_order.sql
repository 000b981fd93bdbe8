-- A session's messages numbered (seq) in time order, as the writer now
-- keeps them: by time, then in the order they were added (id); a message
-- without a time at the latest time among those of its thread (the main
-- conversation, or one subagent's) added before it. They were
-- numbered in the order their files were read, so that a subagent's file
-- read before its session's (Claude Code's compaction summarizer) came
-- first. Only the rows whose number changes are written.

-- +goose Up
UPDATE messages SET seq = r.n FROM (
    SELECT id, row_number() OVER (PARTITION BY session_id ORDER BY k NULLS FIRST, id) - 1 AS n FROM (
        SELECT id, session_id, coalesce(at, max(at) OVER (PARTITION BY session_id, sidechain, agent_id ORDER BY id)) AS k FROM messages) AS t) AS r
WHERE messages.id = r.id AND messages.seq <> r.n;

-- +goose Down
-- The file order is not kept: the numbers stay in time order.
SELECT 1;
