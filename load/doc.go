// Package load is wasmgap's load generator: HTTP load in a closed model (like ab and wrk: each
// connection sends its next request when the last answer arrives) or an open model (like wrk2:
// a total request rate, latency measured from each request's intended send time), and
// scenarios that measure what those tools cannot: message delivery over Server-Sent Events and
// WebSocket (chat-send, sse-fanout, ws-fanout), and logins at a rate (churn), against the chat
// or, through the same receivers, a Centrifugo server (protocol.go).
//
// It is built like vegeta: workers produce one Result per request, a Metrics per worker (or per
// shard of workers) consumes them into HDR histograms and counters, the shards are merged at
// the end into a Report, and reporters (WriteText, WriteJSON) print the Report. Progress
// events are emitted while a run goes, for a terminal progress bar or a web page. The open
// model's send times come from one Pacer, as vegeta's do, for plain HTTP and the chat
// scenarios alike: a constant rate (ConstantPacer), or a linear ramp up to it (LinearPacer,
// Options.Ramp, ScenarioOptions.Ramp).
//
// Every run is bounded: by a request count, a duration, or both, and always by a hard time
// cap (Options.MaxTime). A chat scenario's login is bounded too (ScenarioOptions.LoginTime):
// a server too slow to seat every receiver gives a report of how many it did.
//
// The chat scenarios hold thousands of receivers from one process (a parked goroutine and a
// few KiB each, logins bounded in flight and optionally paced) and can spread receivers and
// sends over several targets, the nodes of one chat (ScenarioOptions.Targets). On Linux the
// fan-out receivers' streams are read on epoll event loops (streamLoops), so that a broadcast
// to 10,000 costs the generator a read each, not a goroutine wake-up and two reads.
//
// The playground's load page (package internal/loadpage) drives it from a browser, against
// the server that serves the page and nothing else.
package load
