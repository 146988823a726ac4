package procfs

import (
	"os"
	"runtime"
	"testing"
)

func TestParseStat(t *testing.T) {
	st, err := ParseStat([]byte("42 (a (b) c) S 7 42 42 0 -1 4194560 100 3 0 0 11 12 13 14 20 0 1 0 5 0 0"))
	want := Stat{State: 'S', PPID: 7, PGRP: 42, Flags: 4194560, MinFlt: 100, CMinFlt: 3, UTime: 11, STime: 12, CUTime: 13, CSTime: 14}
	if err != nil || st != want {
		t.Errorf("parsed %+v, %v; want %+v", st, err, want)
	}
	for _, bad := range []string{"42 (x) S 7", "42 x S 7 42 42 0 -1 4194560 100 3 0 0 11 12 13 14 20", "42 (x) S 7 42 42 0 -1 4194560 many 3 0 0 11 12 13 14 20", "42 (x) Sx 7 42 42 0 -1 4194560 100 3 0 0 11 12 13 14 20"} {
		if _, err := ParseStat([]byte(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestReadThisProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc is Linux's")
	}
	st, err := ReadStat(os.Getpid())
	if err != nil || st.PPID != os.Getppid() || st.MinFlt == 0 {
		t.Errorf("this process: %+v, %v; want parent %d and some page faults", st, err, os.Getppid())
	}
	if _, err := ReadStat(-1); err == nil {
		t.Error("a process that does not exist: no error")
	}
	c, err := SystemCPU()
	if err != nil || len(c) < 8 {
		t.Errorf("SystemCPU: %v, %v; want at least 8 counters", c, err)
	}
}
