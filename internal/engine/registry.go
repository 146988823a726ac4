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
	rank  int // info.Rank: its place in Order
	info  Info
	build func() Engine
}

var (
	registryMu sync.RWMutex
	registry   []registration
)

// Describe makes an engine available to New and Names, in its place in Order, with what
// the reports and the page say about it: its Info, which Infos and Lookup serve. Engine
// packages call it from their init; a second registration of one name, or a name Order
// does not list, panics, as it is a programming error. Its Group and Rank come from its
// name's place in Order (the Info leaves them zero); empty fields get defaults: the title
// is the name, the place PlaceServer.
func Describe(info Info, build func() Engine) {
	if info.Name == "" || build == nil {
		panic("engine: Describe needs a name and a build function")
	}
	info = placed(info).withDefaults()
	registryMu.Lock()
	defer registryMu.Unlock()
	for _, r := range registry {
		if r.name == info.Name {
			panic("engine: " + info.Name + " is registered twice")
		}
	}
	registry = append(registry, registration{name: info.Name, rank: info.Rank, info: info, build: build})
	slices.SortStableFunc(registry, func(a, b registration) int { return cmp.Compare(a.rank, b.rank) })
}

// Infos describes the registered engines in the order Names lists them, then the engines
// that run in the page (Page), each with its version probed once (Info.Version).
func Infos() []Info {
	registryMu.RLock()
	infos := make([]Info, 0, len(registry)+len(Page))
	for _, r := range registry {
		infos = append(infos, r.info)
	}
	registryMu.RUnlock()
	infos = append(infos, Page...)
	var wg sync.WaitGroup
	for i := range infos {
		wg.Go(func() { infos[i].Version = infos[i].version() })
	}
	wg.Wait()
	return infos
}

// Lookup describes the named engine, registered or in the page (Page), without its
// version (Infos probes that).
func Lookup(name string) (Info, bool) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	for _, r := range registry {
		if r.name == name {
			return r.info, true
		}
	}
	for _, p := range Page {
		if p.Name == name {
			return p, true
		}
	}
	return Info{}, false
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
