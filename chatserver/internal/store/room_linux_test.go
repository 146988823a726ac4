package store

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// smallDiskEnv names, in a test's child process, the folder where it
// mounts a small tmpfs of its own (smallDisk).
const smallDiskEnv = "WASMGAP_STORE_SMALL_DISK"

// smallDisk runs the test again in a child process with a mount namespace
// of its own (and a user namespace when not root), where a tmpfs of size
// bytes is mounted at a new folder, and returns that folder in the child;
// in the parent it waits for the child, reports its result and returns
// "". The test is skipped where the machine allows no such namespace.
func smallDisk(t *testing.T, size int) string {
	t.Helper()
	if dir := os.Getenv(smallDiskEnv); dir != "" {
		if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
			t.Fatalf("skip: make the mounts private: %v", err)
		}
		if err := unix.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
			t.Fatalf("skip: mount a tmpfs of %d bytes: %v", size, err)
		}
		t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
		return dir
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v")
	cmd.Env = append(os.Environ(), smallDiskEnv+"="+t.TempDir())
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS, Pdeathsig: syscall.SIGKILL}
	if os.Getuid() != 0 {
		cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWUSER
		cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}}
		cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}
	}
	out, err := cmd.CombinedOutput()
	switch {
	case err != nil && cmd.ProcessState == nil:
		t.Skipf("no mount namespace for a small disk here: %v", err)
	case bytes.Contains(out, []byte("skip: ")):
		t.Skipf("no small disk here: %s", out)
	case err != nil:
		t.Fatalf("on a small disk: %v\n%s", err, out)
	}
	t.Logf("on a small disk:\n%s", out)
	return ""
}

// allocated is the bytes of disk path's blocks take.
func allocated(t *testing.T, path string) int64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Blocks * 512
}

// sendMail writes a batch of one event and one mail for bob of text, as
// the hub does for a send to an offline user, and syncs it: nil means it
// was acknowledged.
func sendMail(st *Store, id uint64, text string) error {
	end, err := st.Write(func(tx *Tx) error {
		if err := ReserveIDs(tx, id); err != nil {
			return err
		}
		if err := PutRecord(tx, &Record{ID: id, Time: time.Now().UnixNano(), To: "mary", Text: text}); err != nil {
			return err
		}
		return AddMail(tx, "bob", &Mail{Orig: id, From: "mary", Text: text, Time: time.Now().UnixNano()})
	})
	if err == nil {
		err = st.SyncTo(end)
	}
	return err
}

// checkMails opens the store at path and checks that bob's mailbox holds
// the texts sent, in order.
func checkMails(t *testing.T, path string, sent []string) {
	t.Helper()
	texts, err := mailsOf(t, filepath.Dir(path))
	if err != nil {
		t.Fatalf("open after the disk filled: %v", err)
	}
	if len(texts) != len(sent) {
		t.Fatalf("bob's mailbox holds %d mails, %d were acknowledged", len(texts), len(sent))
	}
	for i := range sent {
		if texts[i] != sent[i] {
			t.Fatalf("mail %d is %.20q, %.20q was acknowledged", i, texts[i], sent[i])
		}
	}
}

// TestFullDiskRestarts fills a 4 MiB disk with sends, then closes and opens
// the store again and again: every acknowledged send is there, the send
// that did not fit was refused with ErrNoRoom, every close checkpoints
// and chat.db's blocks do not grow from one start to the next.
func TestFullDiskRestarts(t *testing.T) {
	dir := smallDisk(t, 4<<20)
	if dir == "" {
		return
	}
	path := filepath.Join(dir, "chat", "chat.db")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	var sent []string
	for round := range 3 {
		st, _, err := Open(path, false, quiet)
		if err != nil {
			t.Fatalf("start %d: %v", round, err)
		}
		var refused error
		for i := range 2000 {
			text := fmt.Sprintf("r%d m%d %s", round, i, strings.Repeat("x", 3000))
			if refused = sendMail(st, uint64(len(sent)+1), text); refused != nil {
				break
			}
			sent = append(sent, text)
		}
		if !errors.Is(refused, ErrNoRoom) {
			t.Fatalf("start %d: the send that did not fit: %v, want ErrNoRoom", round, refused)
		}
		if err := st.Close(); err != nil {
			t.Fatalf("stop %d, after %d acknowledged sends: %v", round, len(sent), err)
		}
		t.Logf("start %d: %d acknowledged sends, then %v; chat.db takes %d bytes", round, len(sent), refused, allocated(t, path))
	}
	checkMails(t, path, sent)
	first := allocated(t, path)
	for range 3 {
		checkMails(t, path, sent)
	}
	if after := allocated(t, path); after > first {
		t.Fatalf("chat.db took %d bytes after a start, %d after three more", first, after)
	}
}

// crash closes st's files as a kill -9 does: no checkpoint, the log left
// as it is.
func crash(t *testing.T, st *Store) {
	t.Helper()
	if err := errors.Join(st.wal.f.Close(), st.db.Close(), st.room.f.Close()); err != nil {
		t.Fatal(err)
	}
}

// TestRestartOnFullDisk starts a store again after a kill -9, with a log
// to take in, on a disk that another file filled meanwhile: to the brim,
// the store starts in the room it held, every acknowledged send there; a
// store that held no room (written before it did, or on a filesystem
// without fallocate), with room for a part of what taking in the log
// needs: the start is refused with ErrNoRoom, chat.db does not grow and
// its log stays as it was however often it is tried, and once room is
// made every acknowledged send is there.
func TestRestartOnFullDisk(t *testing.T) {
	dir := smallDisk(t, 4<<20)
	if dir == "" {
		return
	}
	path := filepath.Join(dir, "chat.db")
	filler := filepath.Join(dir, "filler")
	var sent []string
	sendAndCrash := func() int64 {
		st, _, err := Open(path, false, quiet)
		if err != nil {
			t.Fatal(err)
		}
		for range 100 {
			text := fmt.Sprintf("m%d %s", len(sent), strings.Repeat("y", 3000))
			if err := sendMail(st, uint64(len(sent)+1), text); err != nil {
				t.Fatal(err)
			}
			sent = append(sent, text)
		}
		end := st.room.end
		crash(t, st)
		return end
	}

	sendAndCrash()
	fillDisk(t, filler, 0)
	checkMails(t, path, sent)
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}

	end := sendAndCrash()
	if err := os.Truncate(path, end); err != nil { // no room held
		t.Fatal(err)
	}
	fillDisk(t, filler, 256<<10) // room for some of the log's pages, not all
	db, wal := allocated(t, path), allocated(t, filepath.Join(dir, "chat.wal"))
	for try := range 3 {
		_, err := mailsOf(t, dir)
		if !errors.Is(err, ErrNoRoom) {
			t.Fatalf("start %d on a full disk: %v, want ErrNoRoom", try, err)
		}
		if d, w := allocated(t, path), allocated(t, filepath.Join(dir, "chat.wal")); d > db || w != wal {
			t.Fatalf("start %d on a full disk: chat.db %d → %d bytes, chat.wal %d → %d", try, db, d, wal, w)
		}
		if try == 0 {
			t.Logf("refused: %v", err)
		}
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	checkMails(t, path, sent)
}

// fillDisk writes path until the disk holding it is full, then gives back
// spare bytes.
func fillDisk(t *testing.T, path string, spare int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, 4096)
	for {
		if _, err := f.Write(block); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			fi, err := f.Stat()
			if err == nil {
				err = f.Truncate(max(0, fi.Size()-spare))
			}
			if err != nil {
				t.Fatal(err)
			}
			return
		}
	}
}

// TestRoomHeldAndGivenBack checks the room's blocks: held in chat.db past
// its pages before the log's records are written, for what a checkpoint
// of them takes, and given back, but for a chunk (and the filesystem's
// own blocks), once it took it.
func TestRoomHeldAndGivenBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chat.db")
	st, _, err := Open(path, true, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for i := range 400 {
		if err := sendMail(st, uint64(i+1), strings.Repeat("z", 4000)); err != nil {
			t.Fatal(err)
		}
	}
	if st.room.noAlloc {
		t.Skip("this filesystem has no fallocate: no room is held")
	}
	need := st.room.need(st.mem.need())
	if got := allocated(t, path); st.room.held < need || got < st.room.end+need {
		t.Fatalf("before the checkpoint chat.db takes %d bytes and holds %d past its %d, the checkpoint needs %d", got, st.room.held, st.room.end, need)
	}
	if err := st.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	if got := allocated(t, path); st.room.held > roomChunk || got > st.room.end+roomChunk+64<<10 {
		t.Fatalf("after the checkpoint chat.db takes %d bytes and holds %d past its %d: more than a chunk (%d)", got, st.room.held, st.room.end, roomChunk)
	}
}
