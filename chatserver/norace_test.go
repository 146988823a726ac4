//go:build !race

package chatserver

// raceDetector: see race_test.go.
const raceDetector = false
