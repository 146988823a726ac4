package benchtool

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// NginxConf writes the page beside a configuration with the asked workers, one that nginx
// itself accepts where it is installed.
func TestNginxConf(t *testing.T) {
	dir := t.TempDir()
	conf, err := NginxConf(dir, "127.0.0.1:1", "1", []byte("<p>page</p>"))
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(text), "worker_processes 1;") || !strings.Contains(string(text), "listen 127.0.0.1:1;") {
		t.Errorf("configuration:\n%s\nwant one worker, listening on 127.0.0.1:1", text)
	}
	if page, err := os.ReadFile(filepath.Join(dir, "root", "index.html")); err != nil || string(page) != "<p>page</p>" {
		t.Errorf("page %q, %v", page, err)
	}
	bin, err := exec.LookPath("nginx")
	if err != nil {
		t.Skip("no nginx on PATH to check the configuration with")
	}
	if out, err := exec.Command(bin, "-t", "-e", filepath.Join(dir, "error.log"), "-c", conf, "-p", dir).CombinedOutput(); err != nil {
		t.Errorf("nginx -t: %v\n%s", err, out)
	}
}
