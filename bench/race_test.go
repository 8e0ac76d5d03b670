//go:build race

package bench

// raceEnabled is set when the tests run under the race detector.
const raceEnabled = true
