-- What an explicit merge of the messages' full-text index may start. After
-- a big write, Store.SettleSearch asks FTS5 to 'merge' a number of pages:
-- with a positive number, FTS5 continues a merge already begun and begins
-- one only on a level of usermerge segments or more (4 by default). At 8,
-- the automerge of 00015, it finishes what the writes began (an ingest
-- leaves a merge of eight segments half done as often as not: its
-- searches read the eight and the merge's output) and starts nothing the
-- writes would not have started.

-- +goose Up
INSERT INTO messages_fts (messages_fts, rank) VALUES ('usermerge', 8);

-- +goose Down
INSERT INTO messages_fts (messages_fts, rank) VALUES ('usermerge', 4);
