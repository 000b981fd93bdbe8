-- What an explicit merge of the full-text indexes may start. After a big
-- write, Store.SettleSearch asks FTS5 to 'merge' a number of pages of
-- each index: with a positive number, FTS5 continues a merge already begun
-- and begins one only on a level of usermerge segments or more (4 by
-- default).
--
-- The messages' index: 8, its automerge (00015), so that the merge
-- finishes what the writes began (an ingest leaves a merge of eight
-- segments half done as often as not: its searches read the eight and the
-- merge's output) and starts nothing the writes would not have started.
--
-- The small indexes (handoffs, compactions, notes): 2. FTS5 writes them a
-- segment at every statement that adds a row, and merges them 4 at a time
-- by default: an ingest of 100k messages left the compactions' index in
-- 18 segments, which every search looks up each word in (0.44 ms of a new
-- process's search, 0.17 ms in one). Merged at 2, each level keeps one
-- segment; a merge of new rows' segments stays at their size and does not
-- rewrite an older, bigger one.

-- +goose Up
INSERT INTO messages_fts (messages_fts, rank) VALUES ('usermerge', 8);
INSERT INTO handoffs_fts (handoffs_fts, rank) VALUES ('usermerge', 2);
INSERT INTO compactions_fts (compactions_fts, rank) VALUES ('usermerge', 2);
INSERT INTO notes_fts (notes_fts, rank) VALUES ('usermerge', 2);

-- +goose Down
INSERT INTO messages_fts (messages_fts, rank) VALUES ('usermerge', 4);
INSERT INTO handoffs_fts (handoffs_fts, rank) VALUES ('usermerge', 4);
INSERT INTO compactions_fts (compactions_fts, rank) VALUES ('usermerge', 4);
INSERT INTO notes_fts (notes_fts, rank) VALUES ('usermerge', 4);
