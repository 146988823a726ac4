// Package store is the chat's storage engine: chat.db, a bbolt file, and
// its write-ahead log chat.wal beside it, the store of record between two
// checkpoints (wal.go), with a memtable in memory over chat.db for what the
// log holds (memtable.go). One goroutine writes, a batch at a time (Write:
// one log record, SyncTo: one fdatasync); replays read beside it (ReadLog).
// Open recovers the log and refuses a damaged store with ErrDamaged, naming
// the file and what to do (storecheck.go).
//
// The store knows the chat's records (Record: an event of the history;
// Mail: a private message waiting in a mailbox) but none of its rules.
package store
