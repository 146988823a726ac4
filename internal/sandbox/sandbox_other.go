//go:build !linux

package sandbox

import "os/exec"

// Apply reports that no layer of the fence exists on this system: the fence is Linux's.
func Apply(Policy) (Report, error) { return Probe(), nil }

// Isolate does nothing here: namespaces are Linux's.
func Isolate(*exec.Cmd) bool { return false }

// Probe reports that no layer of the fence exists on this system.
func Probe() Report {
	return Report{Missing: []string{"every layer: the fence (namespaces, no_new_privs, Landlock, seccomp) exists on Linux only"}}
}
