-- How the messages' full-text index grows. FTS5 keeps new rows in memory
-- and writes them out as a new segment once they hold hashsize bytes (1 MB
-- by default) or the transaction ends; it merges segments automerge (4 by
-- default) at a time as it writes. An ingest writes 10,000 messages a
-- transaction (11 MB of text): at 1 MB that is several small segments a
-- transaction, each rewritten once per level as the index grows, so that
-- merging cost more per MB the bigger the ledger (13% of an ingest's CPU at
-- a million messages). With 8 MB a transaction writes one segment, and
-- merging 8 at a time rewrites each byte half as often: 8.3% fewer
-- instructions for an ingest of 1.1 GB (cachegrind), 5.2% for 114 MB,
-- peak RSS unchanged (docs/performance.md). A search reads one more segment at
-- most per level. The small indexes (handoffs, compactions, notes) keep
-- the defaults: their writes are a few rows each.

-- +goose Up
INSERT INTO messages_fts (messages_fts, rank) VALUES ('hashsize', 8388608);
INSERT INTO messages_fts (messages_fts, rank) VALUES ('automerge', 8);

-- +goose Down
INSERT INTO messages_fts (messages_fts, rank) VALUES ('hashsize', 1048576);
INSERT INTO messages_fts (messages_fts, rank) VALUES ('automerge', 4);
