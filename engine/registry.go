package engine

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// registration is one engine the program links.
type registration struct {
	name  string
	rank  int
	build func() Engine
}

var (
	registryMu sync.RWMutex
	registry   []registration
)

// Ranks of the engines, the order in which Names lists them and reports show them: the
// baseline first, then from the fastest to the slowest.
const (
	RankNative = 10 * (iota + 1)
	RankWazeroCompiler
	RankWazeroInterpreter
	RankYaegi
)

// Register makes the named engine available to New and Names, listed by rank (lowest
// first). Engine packages call it from their init; a second registration of one name
// panics, as it is a programming error.
func Register(name string, rank int, build func() Engine) {
	registryMu.Lock()
	defer registryMu.Unlock()
	for _, r := range registry {
		if r.name == name {
			panic("engine: " + name + " is registered twice")
		}
	}
	registry = append(registry, registration{name: name, rank: rank, build: build})
	slices.SortStableFunc(registry, func(a, b registration) int { return cmp.Compare(a.rank, b.rank) })
}

// Names lists the registered engines in the order reports show them.
func Names() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	names := make([]string, len(registry))
	for i, r := range registry {
		names[i] = r.name
	}
	return names
}

// Known reports whether name is a registered engine, with an error that lists the valid
// names when it is not. It builds nothing.
func Known(name string) error {
	registryMu.RLock()
	defer registryMu.RUnlock()
	for _, r := range registry {
		if r.name == name {
			return nil
		}
	}
	return unknown(name)
}

// New builds the named engine (Load does the work), or says which names are valid.
func New(name string) (Engine, error) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	for _, r := range registry {
		if r.name == name {
			return r.build(), nil
		}
	}
	return nil, unknown(name)
}

// unknown is the error for a name no engine has (registryMu held).
func unknown(name string) error {
	names := make([]string, len(registry))
	for i, r := range registry {
		names[i] = r.name
	}
	if len(names) == 0 {
		return fmt.Errorf("unknown engine %q: this program links no engine", name)
	}
	return fmt.Errorf("unknown engine %q: valid engines are %s", name, strings.Join(names, ", "))
}
