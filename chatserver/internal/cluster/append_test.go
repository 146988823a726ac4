package cluster

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// TestAppendWaitsForTheStream: a synchronous append that finds no stream
// answering (a cluster that just started, a leader change) is tried again
// until its context ends, not twice in half a second: here the stream is
// gone for a second and the append still lands, once.
func TestAppendWaitsForTheStream(t *testing.T) {
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoSigs: true, NoLog: true, JetStream: true, StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	t.Cleanup(srv.Shutdown)
	if !srv.ReadyForConnections(20 * time.Second) {
		t.Fatal("NATS server not ready")
	}
	l, err := Open(Config{URLs: srv.ClientURL(), Retention: time.Hour, MaxBytes: 1 << 20, NodeTTL: 10 * time.Second, Node: "a", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx := t.Context()
	js := l.JetStream()
	st, err := js.Stream(ctx, Stream)
	if err != nil {
		t.Fatal(err)
	}
	cfg := st.CachedInfo().Config
	if err := js.DeleteStream(ctx, Stream); err != nil {
		t.Fatal(err)
	}
	back := make(chan error, 1)
	go func() {
		time.Sleep(time.Second)
		_, err := js.CreateStream(context.Background(), cfg)
		back <- err
	}()
	actx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	acked, err := l.Append(actx, &Record{Kind: "flush", Node: "a", Token: 1}, "a-1", false)
	if err == nil {
		err = acked()
	}
	if err != nil {
		t.Fatalf("append while the stream was away for 1 s: %v", err)
	}
	if err := <-back; err != nil {
		t.Fatal(err)
	}
	st, err = js.Stream(ctx, Stream)
	if err != nil {
		t.Fatal(err)
	}
	if info, err := st.Info(ctx); err != nil || info.State.Msgs != 1 {
		t.Fatalf("stream after the append: %v, %v; want the one record", info, err)
	}
}
