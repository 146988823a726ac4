package benchtool

import (
	"bytes"
	_ "embed"
	"os"
	"path/filepath"
	"text/template"
)

//go:embed nginx.conf.tmpl
var nginxConf string

var nginxTemplate = template.Must(template.New("nginx").Parse(nginxConf))

// NginxConf writes into dir an nginx configuration that serves page at / on addr with
// workers worker processes ("auto": one a core), and the page, and returns the
// configuration's path; run nginx with -p dir and -e dir/error.log.
func NginxConf(dir, addr, workers string, page []byte) (string, error) {
	// nginx's workers run as an unprivileged user: they must be able to read the page.
	root := filepath.Join(dir, "root")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", err
	}
	for _, d := range []string{dir, root} {
		if err := os.Chmod(d, 0o755); err != nil {
			return "", err
		}
	}
	if err := os.WriteFile(filepath.Join(root, "index.html"), page, 0o644); err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := nginxTemplate.Execute(&b, struct{ Dir, Addr, Workers string }{dir, addr, workers}); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "nginx.conf")
	return path, os.WriteFile(path, b.Bytes(), 0o644)
}
