// Command natscluster runs a NATS cluster of three with JetStream in one
// process, on loopback, to try `wasmgap chat --nats` and to measure it
// (docs/SCALING.md). It is not a deployment: the three servers share one
// machine and one process, so they fail together.
//
//	go run ./scripts/natscluster -dir /tmp/nats -port 4222
//
// serves clients on ports 4222, 4223 and 4224 (routes on 6222-6224) and
// prints the --nats value to use; it stops on SIGINT or SIGTERM.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

func main() {
	dir := flag.String("dir", "", "folder of the three JetStream stores (default: a temporary folder, removed at exit)")
	port := flag.Int("port", 4222, "client port of the first server; the others take the next two")
	routePort := flag.Int("route-port", 6222, "route port of the first server; the others take the next two")
	flag.Parse()
	if *port < 1 || *port > 65533 || *routePort < 1 || *routePort > 65533 {
		fmt.Fprintln(os.Stderr, "natscluster: -port and -route-port must be 1 to 65533 (each uses three ports)")
		os.Exit(2)
	}
	if *dir == "" {
		tmp, err := os.MkdirTemp("", "natscluster-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "natscluster:", err)
			os.Exit(1)
		}
		defer os.RemoveAll(tmp)
		*dir = tmp
	}
	var routes, urls []string
	for i := range 3 {
		routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", *routePort+i))
		urls = append(urls, fmt.Sprintf("nats://127.0.0.1:%d", *port+i))
	}
	var servers []*server.Server
	for i := range 3 {
		s, err := server.NewServer(&server.Options{
			ServerName: fmt.Sprintf("n%d", i),
			Host:       "127.0.0.1",
			Port:       *port + i,
			NoSigs:     true,
			JetStream:  true,
			StoreDir:   filepath.Join(*dir, fmt.Sprintf("n%d", i)),
			Cluster:    server.ClusterOpts{Name: "wasmgap-chat", Host: "127.0.0.1", Port: *routePort + i},
			Routes:     server.RoutesFromStr(strings.Join(routes, ",")),
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, "natscluster:", err)
			os.Exit(1)
		}
		s.ConfigureLogger()
		go s.Start()
		if !s.ReadyForConnections(20 * time.Second) {
			fmt.Fprintf(os.Stderr, "natscluster: server %d not ready within 20s\n", i)
			os.Exit(1)
		}
		servers = append(servers, s)
	}
	fmt.Printf("NATS cluster of three with JetStream: --nats %s\n", strings.Join(urls, ","))
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	for _, s := range servers {
		s.Shutdown()
		s.WaitForShutdown()
	}
}
