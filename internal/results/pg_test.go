//go:build unix

package results

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// pgServer is one PostgreSQL server for the whole test binary, started on 127.0.0.1 in
// a folder of its own and stopped by TestMain.
var pgServer struct {
	once    sync.Once
	addr    string // 127.0.0.1:port
	dir     string
	cmd     *exec.Cmd
	skip    string // why there is none
	err     error
	created atomic.Int64
}

// pgBin finds Debian's PostgreSQL binaries.
func pgBin() string {
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(matches) == 0 {
		if p, err := exec.LookPath("initdb"); err == nil {
			return filepath.Dir(p)
		}
		return ""
	}
	return filepath.Dir(matches[len(matches)-1])
}

// asPostgres returns the credential to run initdb and postgres with: they refuse to run
// as root, so as the postgres user when this test runs as root.
func asPostgres() (*syscall.SysProcAttr, int, int, error) {
	if os.Geteuid() != 0 {
		return nil, os.Getuid(), os.Getgid(), nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, 0, 0, fmt.Errorf("running as root, and no postgres user to run PostgreSQL as: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, Pdeathsig: syscall.SIGKILL}, uid, gid, nil
}

func startPostgres() error {
	bin := pgBin()
	if bin == "" {
		pgServer.skip = "PostgreSQL's binaries are not installed (apt-get install postgresql: initdb and postgres in /usr/lib/postgresql/N/bin)"
		return nil
	}
	attr, uid, gid, err := asPostgres()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "wasmgap-pg-")
	if err != nil {
		return err
	}
	pgServer.dir = dir
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		return err
	}
	for _, p := range []string{dir, data} {
		if err := os.Chown(p, uid, gid); err != nil {
			return err
		}
	}
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8")
	initdb.SysProcAttr = attr
	if out, err := initdb.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	pgServer.addr = fmt.Sprintf("127.0.0.1:%d", port)
	cmd := exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-h", "127.0.0.1", "-p", strconv.Itoa(port), "-k", dir,
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	cmd.SysProcAttr = attr
	logf, err := os.Create(filepath.Join(dir, "postgres.log"))
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	pgServer.cmd = cmd
	deadline := time.Now().Add(60 * time.Second)
	for {
		db, err := sql.Open("pgx", "postgres://postgres@"+pgServer.addr+"/postgres?sslmode=disable")
		if err == nil {
			err = db.Ping()
			db.Close()
		}
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "postgres.log"))
			return fmt.Errorf("postgres did not answer within 60s: %v\n%s", err, log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func stopPostgres() {
	if pgServer.cmd != nil && pgServer.cmd.Process != nil {
		_ = pgServer.cmd.Process.Signal(syscall.SIGINT) // fast shutdown
		done := make(chan struct{})
		go func() { _ = pgServer.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = pgServer.cmd.Process.Kill()
		}
	}
	if pgServer.dir != "" {
		os.RemoveAll(pgServer.dir)
	}
}

// postgresDSN returns the address of a new, empty database on the test's PostgreSQL
// server, starting it on first use; it skips the test only when PostgreSQL is not
// installed.
func postgresDSN(t testing.TB) string {
	t.Helper()
	pgServer.once.Do(func() { pgServer.err = startPostgres() })
	if pgServer.err != nil {
		t.Fatal(pgServer.err)
	}
	if pgServer.skip != "" {
		t.Skip(pgServer.skip)
	}
	name := fmt.Sprintf("results_%d", pgServer.created.Add(1))
	admin, err := sql.Open("pgx", "postgres://postgres@"+pgServer.addr+"/postgres?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.ExecContext(context.Background(), "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	return "postgres://postgres@" + pgServer.addr + "/" + name + "?sslmode=disable"
}

func TestMain(m *testing.M) {
	code := m.Run()
	stopPostgres()
	os.Exit(code)
}
