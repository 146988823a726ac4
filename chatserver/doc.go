// Package chatserver is a real-time chat server: the SSE chat of the source
// article ("How to implement a real-time chat server in PHP using Server-Sent
// Events"), with every one of its semantics, served over Server-Sent Events
// and WebSocket from one hub, so users of either transport chat together.
//
// # Routes
//
// Relative to where the handler is mounted:
//
//	GET  /                          the chat page (self-contained, relative URLs)
//	GET  /<nick>                    log in over SSE (Accept: text/event-stream);
//	                                resume with Last-Event-ID or ?last_event_id=<n>
//	GET  /ws?nick=<nick>&resume=<n> log in over WebSocket
//	GET  /msg/<from>/<to>%20<text>  send (the article's route); answers "ok"
//	POST /send                      send {"from","to","text"}; answers {"ok":true}
//
// An SSE event is "id: <n>\ndata: <text>\n\n"; a WebSocket event is the text
// frame {"id":<n>,"text":"<text>"}, and a WebSocket client sends
// {"to":"<nick> or all","text":"<message>"}. The texts are the article's:
// "Welcome <nick>!", "now online: a, b", "<nick> has joined.",
// "<nick> has left.", "<from> to all: <msg>", "<from>: <msg>",
// "You to <to>: <msg>", "You to <to> (offline): <msg>" and, for a message
// kept while the user was offline, "<from> (YYYY-MM-DD HH:MM): <msg>".
//
// # Presence at scale
//
// A join or leave with no presence notice told in the last PresenceWindow
// (one more window per 1,000 users online) is told at once, in the
// article's words; those that follow within the window are told together
// at its end ("A and B joined.", "A, B and 312 others joined.", "... left."),
// and before any later event, so N logins never cost N² deliveries. A
// welcome's "now online" names everyone when at most 50 are online, else 50
// of them and the count ("... and 9950 others (10000 users; a welcome names
// at most 50)").
//
// An idle stream holds no buffer and no goroutine, and a broadcast is
// written by a few writer loops while the sockets take it at once
// (chatserver/internal/stream says how).
//
// # Nothing lost
//
// Event ids come from one sequence shared by all users and reserved in the
// store a block at a time (a restart goes on after the last block), so the
// ids of one user's stream grow strictly, across restarts and kill -9, and
// a login, whose welcome lines take ids and store nothing, waits for no sync.
// Every event a user can receive (a message to all, to the user, an echo, a
// join or leave notice) is stored under its id. A stream that reconnects
// with the last id it saw first gets the stored events it missed (within
// the Retention window), then the welcome lines and anything new.
//
// A resume id (Last-Event-ID, ?last_event_id= or resume=) is the client's
// claim about what it saw, never an input to the sequence: no request can
// move it. An id above the last one issued cannot have been seen here (a
// store that was reset, or a forged id): the stream is told so in a notice,
// nothing is replayed and it goes on as a fresh login. An id that is not a
// decimal uint64 is refused with 400.
//
// Each stream has a queue of QueueSize events. The hub never waits for a
// stream: when the queue is full the stream is cut, with the reason as its
// last line when the client's buffers have room for it, and the client
// resumes from its last id. A slow consumer costs only itself: its socket's
// send buffer is small, what an address's streams hold unread is bounded
// (MaxQueuedBytesPerAddr), and a stream cut as slow is reset.
//
// A user whose last stream closed stays online for LeaveGrace, so a
// reconnect (a browser's EventSource retries within seconds) neither says
// "has left." nor misses a private message. A private message to a user
// who is offline is kept in a mailbox and offered at each login until its
// delivery is known, then removed: a resume id at or past its id confirms
// it, so does a WebSocket's pong to the ping sent right after it, and so
// does an SSE stream that stays open MailAckDelay after writing it (an event
// stream has no way back). A login that drops before that leaves it for the
// next one, so a reloaded page loses nothing; a client that resumes with its
// id gets nothing twice. Each offering is stored under a new id (the ids of
// a stream only grow) and the previous one is deleted.
//
// # Store
//
// A single node keeps its chat in chatserver/internal/store: chat.db (bbolt)
// and its write-ahead log, the hub committing requests in batches with one
// fdatasync each (a request to an idle hub is a batch of one, handled on
// its caller's goroutine). Events reach the streams only after
// their batch is synced, and a send is answered only then, so an answered
// send survives a restart, a kill -9 and a crash of the machine; a damaged
// store is refused with ErrStoreDamaged (the store's package comment says
// how). A batch that fails leaves nothing behind: its changes leave the
// memtable and the rules' machine is rolled back. Shutdown tells every
// stream to resume, lets the requests in flight finish and closes the store.
//
// # Limits and requests from other hosts
//
// Every limit is an Options field, its default beside it, and every
// refusal says what was wrong and what is allowed; docs/SECURITY.md lists
// them all with their flags. Cross-site sends and logins from browsers
// are refused (403; POST /send takes only application/json), while curl
// and ab work as in the article; Serve answers only to the Host names of
// its address and AllowedHosts. Text is never HTML: the page shows it
// with textContent, under a Content-Security-Policy that runs only its
// own script. Serve answers the plain GET / and GET /msg/... before
// net/http (chatserver/internal/fastpath, for the App of fast.go), each in
// one write; one that closes its connection (ab's) holds no goroutine.
//
// # Who speaks
//
// By default a nickname is a name, as in the article. With AuthSecret every
// login and send shows a connection token of its nickname (MintToken), and
// with ClaimNicks the first login of a nickname claims it
// (chatserver/internal/auth says how each is shown and checked). Behind
// TrustedProxies the client's address, for every per-address limit, comes
// from the forwarding header (httpguard.Proxies).
//
// # Several nodes
//
// Every send (GET /msg/, POST /send, a WebSocket's frames, the fast
// path), login, confirmation and replay goes through the Server's one node
// (node.go): by default this process's store and hub. A WebSocket's frames
// are pipelined: each is handed on without waiting for the previous one to
// be stored, in order, so many of them share a store commit.
//
// With Options.NATS (wasmgap chat --nats nats://host:4222,...) several
// nodes serve one chat: the node is a natsNode, and the store and the hub
// above are replaced by one JetStream log (chatserver/internal/cluster, whose
// package comment tells the design; its guarantees are in
// docs/SCALING.md). Every change of the chat's state is one record of the
// log, its sequence numbers the ids of the events it makes, and every
// node applies the whole log in order to the same rules' machine
// (internal/room) that a single node feeds from its own log (nats.go,
// natsstate.go), delivering the events to its own streams.
package chatserver
