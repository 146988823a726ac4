// Command farm-demo runs a bench farm on this one machine, to try `wasmgap agent` and
// `wasmgap bench --farm` (docs/FARM.md): an embedded NATS server with JetStream on
// loopback that admits only holders of its nkeys, PostgreSQL as the shared results
// store where it is installed (else an SQLite file), two agents, and a plan run with
// --each, which prints a table per agent and the two side by side.
//
//	go run ./scripts/farm-demo -wasmgap bin/wasmgap
//
// Everything it starts lives in a temporary folder and stops with it. The two agents
// share one machine, so their timings spoil each other's: the demo shows the farm, not
// a measurement.
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"

	"github.com/wasmgap/wasmgap/internal/childproc"
)

func main() {
	wasmgap := flag.String("wasmgap", "bin/wasmgap", "the wasmgap binary")
	mode := flag.String("mode", "each", "how the agents share the plan: each (a table per agent) or split")
	flag.Parse()
	if *mode != "each" && *mode != "split" {
		fmt.Fprintf(os.Stderr, "farm-demo: -mode %q: use each or split\n", *mode)
		os.Exit(2)
	}
	if err := demo(*wasmgap, *mode, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "farm-demo:", err)
		os.Exit(1)
	}
}

func demo(wasmgap, mode string, benchArgs []string) error {
	dir, err := os.MkdirTemp("", "farm-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	// NATS: one nkey per client; a client without one is refused.
	seeds := map[string]string{}
	var users []*server.NkeyUser
	for _, name := range []string{"bench", "demo-1", "demo-2"} {
		kp, err := nkeys.CreateUser()
		if err != nil {
			return err
		}
		pub, _ := kp.PublicKey()
		seed, _ := kp.Seed()
		seeds[name] = filepath.Join(dir, name+".nk")
		if err := os.WriteFile(seeds[name], seed, 0o600); err != nil {
			return err
		}
		users = append(users, &server.NkeyUser{Nkey: pub})
	}
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoSigs: true, NoLog: true, JetStream: true, StoreDir: filepath.Join(dir, "nats"), Nkeys: users})
	if err != nil {
		return err
	}
	go ns.Start()
	defer ns.Shutdown()
	if !ns.ReadyForConnections(30 * time.Second) {
		return errors.New("the NATS server did not start within 30s")
	}
	url := ns.ClientURL()
	fmt.Fprintf(os.Stderr, "farm-demo: NATS with JetStream at %s, nkeys in %s\n", url, dir)

	dsn, stopPG, err := startPostgres(dir)
	if err != nil {
		return err
	}
	defer stopPG()
	if dsn == "" {
		dsn = filepath.Join(dir, "results.db")
		fmt.Fprintf(os.Stderr, "farm-demo: PostgreSQL is not installed: results in %s (SQLite)\n", dsn)
	} else {
		fmt.Fprintf(os.Stderr, "farm-demo: results in PostgreSQL at %s\n", dsn)
	}

	for _, name := range []string{"demo-1", "demo-2"} {
		cmd := exec.Command(wasmgap, "agent", "--nats", url, "--nkey", seeds[name], "--name", name, "--engine", "native,wazero-compiler")
		cmd.Stderr = prefixed{name}
		if err := childproc.Start(cmd); err != nil {
			return fmt.Errorf("start agent %s: %w", name, err)
		}
		defer func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			_ = cmd.Wait()
		}()
	}
	args := []string{"bench", "--farm", url, "--nkey", seeds["bench"], "--" + mode, "--agents", "2", "--ack-wait", "10s", "--results-db", dsn}
	if len(benchArgs) == 0 {
		benchArgs = []string{"--engine", "native,wazero-compiler", "--kernel", "fib_rec,fib_it,ack,test7", "--arg", "fib_rec.n=25", "--arg", "fib_it.n=40", "--arg", "ack.m=7", "--arg", "test7.large=100000", "--runs", "6", "--allow-failures"}
	}
	bench := exec.Command(wasmgap, append(args, benchArgs...)...)
	bench.Stdout, bench.Stderr = os.Stdout, os.Stderr
	fmt.Fprintf(os.Stderr, "farm-demo: %s %s\n", wasmgap, strings.Join(bench.Args[1:], " "))
	if err := childproc.Start(bench); err != nil {
		return err
	}
	if err := bench.Wait(); err != nil {
		return fmt.Errorf("bench --farm: %w", err)
	}
	return nil
}

// prefixed writes an agent's log lines to stderr after its name.
type prefixed struct{ name string }

func (p prefixed) Write(b []byte) (int, error) {
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if line != "" {
			fmt.Fprintf(os.Stderr, "  %s | %s", p.name, line)
		}
	}
	return len(b), nil
}

// startPostgres starts Debian's PostgreSQL in dir on a free loopback port and returns
// its address, or "" when it is not installed.
func startPostgres(dir string) (dsn string, stop func(), err error) {
	stop = func() {}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(matches) == 0 {
		return "", stop, nil
	}
	bin := filepath.Dir(matches[len(matches)-1])
	var attr *syscall.SysProcAttr
	data := filepath.Join(dir, "pg")
	if err := os.Mkdir(data, 0o700); err != nil {
		return "", stop, err
	}
	if os.Geteuid() == 0 { // initdb and postgres refuse root
		u, err := user.Lookup("postgres")
		if err != nil {
			return "", stop, fmt.Errorf("running as root, and no postgres user to run PostgreSQL as: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		attr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
		for _, p := range []string{dir, data} {
			if err := os.Chown(p, uid, gid); err != nil {
				return "", stop, err
			}
		}
	}
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8")
	initdb.SysProcAttr = attr
	if out, err := childproc.CombinedOutput(initdb); err != nil {
		return "", stop, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", stop, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	pg := exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-h", "127.0.0.1", "-p", strconv.Itoa(port), "-k", dir)
	pg.SysProcAttr = attr
	if err := childproc.Start(pg); err != nil {
		return "", stop, fmt.Errorf("postgres: %w", err)
	}
	stop = func() {
		_ = pg.Process.Signal(syscall.SIGINT)
		_ = pg.Wait()
	}
	dsn = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		db, err := sql.Open("pgx", dsn)
		if err == nil {
			err = db.PingContext(ctx)
			db.Close()
		}
		if err == nil {
			return dsn, stop, nil
		}
		if ctx.Err() != nil {
			stop()
			return "", func() {}, fmt.Errorf("postgres did not answer within 60s: %w", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
