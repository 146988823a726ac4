package fastpath

import (
	"container/list"
	"fmt"
	"net"
	"net/netip"
)

// The open connections of all addresses are bounded (Options.MaxConns) so
// that clients cannot take the process's last file descriptors: at the
// bound, the address holding the most connections gives up its oldest one
// to a newcomer from an address holding fewer, so a flood of slow or idle
// connections from a few addresses costs those addresses, while the page
// and the sends of everyone else are still answered.

// evictableOf is addr's list of served connections (under mu).
func (l *Listener) evictableOf(addr netip.Addr) *list.List {
	ls := l.evictable[addr]
	if ls == nil {
		ls = list.New()
		l.evictable[addr] = ls
	}
	return ls
}

// forget takes c off its address's list (under mu).
func (l *Listener) forget(c *countedConn) {
	ls := l.evictable[c.addr]
	ls.Remove(c.elem)
	c.elem = nil
	if ls.Len() == 0 {
		delete(l.evictable, c.addr)
	}
}

// evict picks, for a newcomer from addr, the oldest connection of the
// address holding the most, when that holds more than addr would with the
// newcomer; it is taken off the lists (under mu) and must be closed by the
// caller. nil: addr holds the most itself, the newcomer is refused.
func (l *Listener) evict(addr netip.Addr) net.Conn {
	var most netip.Addr
	n := -1
	for a, ls := range l.evictable {
		if ls.Len() > n {
			most, n = a, ls.Len()
		}
	}
	if n <= 0 || n <= l.perAddr[addr]+1 {
		return nil
	}
	c := l.evictable[most].Front().Value.(*countedConn)
	l.forget(c)
	return c
}

// refuseFull answers a connection past MaxConns, while its own address
// holds the most, with 503 and closes it, as refuseConn does.
func refuseFull(c socket, limit int) {
	text := fmt.Sprintf("the server holds its most open connections (%d), and yours the most of them: close some, then retry\n", limit)
	answerAndClose(c, "503 Service Unavailable", text)
}
