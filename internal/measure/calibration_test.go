package measure

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

var update = flag.Bool("update", false, "rewrite "+CalibrationFile+" from Calibration")

// root is the module's root, from this package's directory.
const root = "../.."

// TestCalibrationFileIsCurrent: the page's calibration constants are the Go ones. go
// generate ./internal/measure (go test -update) rewrites the file.
func TestCalibrationFileIsCurrent(t *testing.T) {
	path := filepath.Join(root, CalibrationFile)
	want := CalibrationTS()
	if *update {
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, want, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v: run go generate ./internal/measure", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from measure.Calibration: run go generate ./internal/measure\ngot:\n%s\nwant:\n%s", CalibrationFile, got, want)
	}
}

// TestHarnessTakesCalibrationFromFile: the page's harness declares none of the rules
// itself and imports them from the generated file, so that the file is what it runs by.
func TestHarnessTakesCalibrationFromFile(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(root, "web/src/harness.ts"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`from "\./calibration"`).Match(src) {
		t.Error("web/src/harness.ts does not import ./calibration")
	}
	for _, r := range Calibration() {
		if regexp.MustCompile(`(const|let|var)\s+` + r.Name + `\b`).Match(src) {
			t.Errorf("web/src/harness.ts declares %s itself: import it from ./calibration", r.Name)
		}
	}
	// The growth rule's numbers live in the file too, not as literals beside it.
	if regexp.MustCompile(`\b1\.2\s*\*|\b100\s*\*\s*reps`).Match(src) {
		t.Error("web/src/harness.ts's grow spells the growth rule's numbers: use GROW_MARGIN and MAX_GROWTH")
	}
}
