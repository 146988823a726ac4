package httpguard

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Proxies are the reverse proxies whose word on the client's address is taken: a
// request whose socket peer is one of them is counted, by every per-address limit, under
// the address its forwarding header names. Build it with NewProxies; the zero value and
// nil trust no one.
type Proxies struct {
	nets     []netip.Prefix
	header   string // "X-Forwarded-For" or "Forwarded"
	ipv6Bits int    // the leading bits of an IPv6 client address that key it (Key); 0: DefaultIPv6Prefix
}

// DefaultIPv6Prefix is how many leading bits of an IPv6 address key the per-address limits
// by default: a /64, which one subscriber, host or virtual machine usually holds whole, so
// that it counts as one client and not as 2^64.
const DefaultIPv6Prefix = 64

// WithIPv6Prefix is p keying IPv6 client addresses by their first bits (16 to 128; 128:
// each address apart; 0: DefaultIPv6Prefix). p itself is unchanged; a nil p trusts no
// proxy in the copy either.
func (p *Proxies) WithIPv6Prefix(bits int) (*Proxies, error) {
	if bits != 0 && (bits < 16 || bits > 128) {
		return nil, fmt.Errorf("IPv6 prefix of client addresses /%d: allowed are 16 to 128 bits (64, the default, counts a /64 as one client; 128 counts each address apart)", bits)
	}
	var q Proxies
	if p != nil {
		q = *p
	} else {
		q.header = ProxyHeaders[0]
	}
	q.ipv6Bits = bits
	return &q, nil
}

// Key is what every per-address limit counts the client address addr (ClientAddr's, or a
// RemoteAddr's host) under, and names in its refusals: an IPv4 address as it is, an IPv6
// address as its network of p's prefix (DefaultIPv6Prefix bits unless WithIPv6Prefix
// said otherwise), "2001:db8:1:2::/64" for every address in it. A trusted proxy's own
// address is never masked: it is counted apart from clients near it. A string that is
// not an address is its own key.
func (p *Proxies) Key(addr string) string {
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return addr
	}
	k := p.KeyAddr(a)
	if bits := p.prefixOf(k); bits < k.BitLen() {
		return netip.PrefixFrom(k, bits).String()
	}
	return k.String()
}

// KeyAddr is Key for a parsed address, as the first address of its network.
func (p *Proxies) KeyAddr(a netip.Addr) netip.Addr {
	a = a.Unmap().WithZone("")
	pre, _ := a.Prefix(p.prefixOf(a))
	return pre.Addr()
}

// prefixOf is the bits of a that key it: all of an IPv4 address's and of a trusted
// proxy's, p's IPv6 prefix of the others.
func (p *Proxies) prefixOf(a netip.Addr) int {
	switch {
	case !a.Is6() || p != nil && p.trusted(a):
		return a.BitLen()
	case p != nil && p.ipv6Bits != 0:
		return p.ipv6Bits
	}
	return DefaultIPv6Prefix
}

// ProxyHeaders are the forwarding headers Proxies can read.
var ProxyHeaders = []string{"X-Forwarded-For", "Forwarded"}

// ParseProxy reads a --trusted-proxy value: a CIDR prefix (10.0.0.0/8, fd00::/8) or one
// address (127.0.0.1, ::1).
func ParseProxy(s string) (netip.Prefix, error) {
	s = strings.TrimSpace(s)
	if p, err := netip.ParsePrefix(s); err == nil {
		return p.Masked(), nil
	}
	if a, err := netip.ParseAddr(s); err == nil {
		a = a.Unmap()
		return netip.PrefixFrom(a, a.BitLen()), nil
	}
	return netip.Prefix{}, fmt.Errorf("trusted proxy %q is neither a CIDR prefix (10.0.0.0/8, fd00::/8) nor an IP address (127.0.0.1)", s)
}

// NewProxies trusts the peers in nets to tell the client's address in header, which must
// be one of ProxyHeaders ("" for X-Forwarded-For, what nginx, HAProxy, Caddy and Traefik
// set). Only one header is read: a proxy passes on the other one as the client sent it,
// so reading both would let a client choose its own address.
func NewProxies(nets []netip.Prefix, header string) (*Proxies, error) {
	if header == "" {
		header = ProxyHeaders[0]
	}
	for _, h := range ProxyHeaders {
		if strings.EqualFold(h, header) {
			return &Proxies{nets: nets, header: h}, nil
		}
	}
	return nil, fmt.Errorf("forwarding header %q is not read: use %s", header, strings.Join(ProxyHeaders, " or "))
}

func (p *Proxies) trusted(a netip.Addr) bool {
	a = a.Unmap()
	for _, n := range p.nets {
		if n.Contains(a) {
			return true
		}
	}
	return false
}

// ClientAddr is the IP address of the request's client, the one rule of every
// per-address limit (which counts it under Key): the socket peer's address, unless the peer is a trusted proxy; then
// the hops of the forwarding header are read from the right (the nearest proxy's entry
// last) and the first one that is not a trusted proxy is the client. A hop that is not an
// address (unknown, an obfuscated name) ends the walk at the trusted proxy that wrote it:
// what lies beyond it cannot be told apart from a client's own invention.
func (p *Proxies) ClientAddr(r *http.Request) string {
	peer := PeerAddr(r.RemoteAddr)
	if p == nil || len(p.nets) == 0 {
		return peer
	}
	a, err := netip.ParseAddr(peer)
	if err != nil || !p.trusted(a) {
		return peer
	}
	hops := p.hops(r)
	client := a
	for i := len(hops) - 1; i >= 0; i-- {
		h, ok := parseHop(hops[i])
		if !ok {
			break
		}
		client = h
		if !p.trusted(h) {
			break
		}
	}
	return client.Unmap().String()
}

// Handler serves next with each request's RemoteAddr set to its client's address
// (ClientAddr, port 0) when it came through a trusted proxy, so every limit, log and
// handler below sees the client, not the proxy.
func (p *Proxies) Handler(next http.Handler) http.Handler {
	if p == nil || len(p.nets) == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c := p.ClientAddr(r); c != PeerAddr(r.RemoteAddr) {
			r2 := *r
			r2.RemoteAddr = net.JoinHostPort(c, "0")
			r = &r2
		}
		next.ServeHTTP(w, r)
	})
}

// hops lists the header's entries, from the farthest hop to the nearest, across every
// line of the header.
func (p *Proxies) hops(r *http.Request) []string {
	var out []string
	for _, line := range r.Header.Values(p.header) {
		for e := range strings.SplitSeq(line, ",") {
			e = strings.TrimSpace(e)
			if p.header == "Forwarded" {
				e = forwardedFor(e)
			}
			out = append(out, e)
		}
	}
	return out
}

// forwardedFor is the for= parameter of one Forwarded element (RFC 7239), unquoted; ""
// when it has none.
func forwardedFor(elem string) string {
	for pair := range strings.SplitSeq(elem, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if ok && strings.EqualFold(strings.TrimSpace(k), "for") {
			return strings.Trim(strings.TrimSpace(v), `"`)
		}
	}
	return ""
}

// parseHop reads one hop's address: 192.0.2.1, 192.0.2.1:4711, 2001:db8::1 or
// [2001:db8::1]:4711.
func parseHop(s string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap(), true
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap(), true
	}
	if a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")); err == nil {
		return a.Unmap(), true
	}
	return netip.Addr{}, false
}

// PeerAddr is the host part of a RemoteAddr (host:port): the address a
// server's per-client limits count by; remote itself when it has no port.
func PeerAddr(remote string) string {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		return remote
	}
	return host
}

// Trusts reports whether the peer at remote (a RemoteAddr, host:port) is a trusted proxy,
// whose requests name their client in the forwarding header: a server that answers some
// requests before net/http (the chat's fast path) hands those to ClientAddr instead.
func (p *Proxies) Trusts(remote string) bool {
	if p == nil || len(p.nets) == 0 {
		return false
	}
	a, err := netip.ParseAddr(PeerAddr(remote))
	return err == nil && p.trusted(a)
}
