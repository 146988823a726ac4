//go:build unix

// Package pgtest starts a throwaway PostgreSQL server on loopback, from Debian's binaries,
// for the results store's tests and the one-machine farm demo: a cluster in a folder of
// its own, run as the postgres user when this process is root (initdb and postgres refuse
// root), with durability off, removed when it stops.
package pgtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"

	"github.com/wasmgap/wasmgap/internal/childproc"
)

// ErrNotInstalled is Start's error where PostgreSQL's binaries are not installed.
var ErrNotInstalled = errors.New("PostgreSQL's binaries are not installed (apt-get install postgresql: initdb and postgres in /usr/lib/postgresql/N/bin)")

// Server is a running PostgreSQL server.
type Server struct {
	// Addr is where it listens: 127.0.0.1:port.
	Addr string
	dir  string
	cmd  *exec.Cmd
}

// bin finds Debian's PostgreSQL binaries, the newest version's.
func bin() string {
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(matches) == 0 {
		if p, err := exec.LookPath("initdb"); err == nil {
			return filepath.Dir(p)
		}
		return ""
	}
	return filepath.Dir(matches[len(matches)-1])
}

// asPostgres returns the credential to run initdb and postgres with: this process's, or
// the postgres user's when it is root.
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
	return &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}, uid, gid, nil
}

// Start initialises a cluster in a new temporary folder and starts PostgreSQL on a free
// port of 127.0.0.1, waiting up to a minute for it to answer. It returns ErrNotInstalled
// where the binaries are missing.
func Start() (*Server, error) {
	b := bin()
	if b == "" {
		return nil, ErrNotInstalled
	}
	attr, uid, gid, err := asPostgres()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "wasmgap-pg-")
	if err != nil {
		return nil, err
	}
	s := &Server{dir: dir}
	if err := s.start(b, attr, uid, gid); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

func (s *Server) start(b string, attr *syscall.SysProcAttr, uid, gid int) error {
	data := filepath.Join(s.dir, "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		return err
	}
	for _, p := range []string{s.dir, data} {
		if err := os.Chown(p, uid, gid); err != nil {
			return err
		}
	}
	initdb := exec.Command(filepath.Join(b, "initdb"), "-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8")
	initdb.SysProcAttr = attr
	if out, err := childproc.CombinedOutput(initdb); err != nil {
		return fmt.Errorf("initdb: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	s.Addr = fmt.Sprintf("127.0.0.1:%d", port)
	cmd := exec.Command(filepath.Join(b, "postgres"), "-D", data, "-h", "127.0.0.1", "-p", strconv.Itoa(port), "-k", s.dir,
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	cmd.SysProcAttr = attr
	logf, err := os.Create(filepath.Join(s.dir, "postgres.log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := childproc.Start(cmd); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	s.cmd = cmd
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		db, err := sql.Open("pgx", s.DSN("postgres"))
		if err == nil {
			err = db.PingContext(ctx)
			db.Close()
		}
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			log, _ := os.ReadFile(filepath.Join(s.dir, "postgres.log"))
			return fmt.Errorf("postgres did not answer within a minute: %v\n%s", err, log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// DSN is the address of the named database on the server, as the results store takes it.
func (s *Server) DSN(db string) string {
	return "postgres://postgres@" + s.Addr + "/" + db + "?sslmode=disable"
}

// Stop stops the server (a fast shutdown, then SIGKILL after 10s) and removes its folder.
func (s *Server) Stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(syscall.SIGINT)
		done := make(chan struct{})
		go func() { _ = s.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = childproc.KillGroup(s.cmd)
			<-done
		}
	}
	os.RemoveAll(s.dir)
}
