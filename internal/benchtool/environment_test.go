package benchtool

import (
	"context"
	"strings"
	"testing"
)

func TestEnvironment(t *testing.T) {
	lines := Environment(context.Background(), []Program{
		{Name: "nginx", Path: "sh", Args: []string{"-c", "echo 'nginx version: nginx/1.22.1' >&2"}},
		{Name: "wrk", Path: "sh", Args: []string{"-c", "echo 'wrk 4.1.0 [epoll] Copyright (C) 2012 Will Glozer'; echo usage"}},
		{Name: "php", Missing: "php not installed: apt-get install php-cli"},
	})
	if len(lines) != 5 || !strings.HasPrefix(lines[0], "date: ") || !strings.HasPrefix(lines[1], "machine: ") || !strings.Contains(lines[1], " cores") {
		t.Fatalf("lines %q", lines)
	}
	for i, want := range []string{"nginx: nginx/1.22.1", "wrk: wrk 4.1.0 [epoll]", "php: php not installed: apt-get install php-cli"} {
		if lines[2+i] != want {
			t.Errorf("line %d = %q, want %q", 2+i, lines[2+i], want)
		}
	}
}
