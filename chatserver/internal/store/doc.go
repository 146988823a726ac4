// Package store is the chat's storage engine: chat.db, a bbolt file, and
// its write-ahead log chat.wal beside it, the store of record between two
// checkpoints (wal.go), with a memtable in memory over chat.db for what the
// log holds (memtable.go). One writer at a time writes, a batch at a time (Write:
// one log record), and a Syncer syncs behind it (one fdatasync for every
// batch written meanwhile) and runs what waited for each batch, in order;
// replays read beside them (ReadLog).
// Open recovers the log and refuses a damaged store with ErrDamaged, naming
// the file and what to do (storecheck.go).
//
// The store knows the chat's records (Record: an event of the history;
// Mail: a private message waiting in a mailbox; Claim: a nickname's claim)
// but none of its rules.
//
// # How an answered send survives
//
// The store (whose API is the dozen names the hub writes and reads with)
// is one bbolt file under the chat's data folder (chat.db: pure Go, one
// file, readers that never block the writer) and its write-ahead log (chat.wal),
// which is the store of record between two checkpoints. The hub (one lock)
// owns the users and streams and handles requests in batches (a group
// commit): a batch's changes go to a memtable in memory and are appended
// to the log as one record (length, CRC-32C, the changes), synced with one
// fdatasync; reads see the memtable over chat.db (the memtable holds no
// more than 64 MB of log do). A checkpoint (every 64 MB of log, at each
// prune and at shutdown) writes the memtable into chat.db in one bbolt
// transaction, synced by bbolt's own commit, then empties the log. Events
// reach the streams only after their batch is synced, and a send is
// answered only then, so an answered send survives a restart, a kill -9
// and a crash of the machine: chat.db is only ever written by a synced
// transaction, so the disk holds it as of its last checkpoint (or the one
// being written, if its commit completed), and at open the log's records
// are applied to it again (applying one twice changes nothing). A record
// cut short at the log's end (a crash during a write that was never
// answered) is dropped with a warning; a damaged record with a whole
// record of the log anywhere after it, one whose length is damaged, a log
// that is noise or of another epoch, a log missing or empty beside a
// chat.db that expects it, and a chat.db missing or empty beside its log
// refuse the store with ErrStoreDamaged, naming the file, the offset and
// what to do (wal.go says how each is told). So does a claim or a mailbox message
// that no longer decodes or whose checksum does not match (values.go):
// it would refuse its user's every login, or be delivered altered.
// A checkpoint needs room on the disk for what the log holds: the store
// holds it in chat.db, past its last page, before it writes a batch's
// record, and refuses a batch without room with ErrNoRoom (room.go), so
// that a stop and a start on a nearly full disk neither fail nor grow
// chat.db.
// A batch that fails (the store, or a request that fails it) leaves
// nothing behind: its changes leave the memtable, and the rules' machine
// is rolled back (room.Machine.Rollback).
// Shutdown tells every stream to resume, lets the requests in flight
// finish and closes the store.
package store
