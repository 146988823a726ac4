//go:build race

package chatserver

// raceDetector: the tests run under -race, whose shadow memory and larger
// stacks make memory figures incomparable with the bounds set for a
// normal build.
const raceDetector = true
