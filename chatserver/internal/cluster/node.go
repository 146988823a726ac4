package cluster

import (
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
)

// NewNodeID names a new incarnation of a node: its host name (in the
// characters a key of the nodes' bucket may hold) and a random suffix.
func NewNodeID() string {
	host, _ := os.Hostname()
	host = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '-'
	}, host)
	return host + "-" + strconv.FormatUint(rand.Uint64()>>16, 36)
}
