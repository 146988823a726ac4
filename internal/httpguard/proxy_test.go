package httpguard

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
)

func TestClientAddr(t *testing.T) {
	nets := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	xff, _ := NewProxies(nets, "")
	fwd, _ := NewProxies(nets, "forwarded")
	for _, tc := range []struct {
		name   string
		p      *Proxies
		peer   string
		header []string
		want   string
	}{
		{"no proxies", nil, "10.1.1.1:5000", []string{"203.0.113.9"}, "10.1.1.1"},
		{"untrusted peer: its header is ignored", xff, "198.51.100.1:5000", []string{"203.0.113.9"}, "198.51.100.1"},
		{"trusted peer, one hop", xff, "10.1.1.1:5000", []string{"203.0.113.9"}, "203.0.113.9"},
		{"trusted peer, no header", xff, "10.1.1.1:5000", nil, "10.1.1.1"},
		{"a client's own entry is left of the proxy's", xff, "10.1.1.1:5000", []string{"1.2.3.4, 203.0.113.9"}, "203.0.113.9"},
		{"chain of trusted proxies", xff, "10.1.1.1:5000", []string{"203.0.113.9, 10.2.2.2, 10.3.3.3"}, "203.0.113.9"},
		{"several header lines", xff, "10.1.1.1:5000", []string{"1.2.3.4", "203.0.113.9, 10.2.2.2"}, "203.0.113.9"},
		{"IPv6 peer and client", xff, "[::1]:5000", []string{"2001:db8::7"}, "2001:db8::7"},
		{"a hop that is no address ends the walk", xff, "10.1.1.1:5000", []string{"203.0.113.9, unknown"}, "10.1.1.1"},
		{"all hops trusted", xff, "10.1.1.1:5000", []string{"10.9.9.9"}, "10.9.9.9"},
		{"IPv4-mapped", xff, "10.1.1.1:5000", []string{"::ffff:203.0.113.9"}, "203.0.113.9"},
		{"Forwarded", fwd, "10.1.1.1:5000", []string{`for=1.2.3.4, for=203.0.113.9;proto=https;by=10.1.1.1`}, "203.0.113.9"},
		{"Forwarded IPv6 with port", fwd, "10.1.1.1:5000", []string{`for="[2001:db8::7]:4711"`}, "2001:db8::7"},
		{"Forwarded obfuscated", fwd, "10.1.1.1:5000", []string{`for=_hidden`}, "10.1.1.1"},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = tc.peer
		name := "X-Forwarded-For"
		if tc.p == fwd {
			name = "Forwarded"
		}
		for _, v := range tc.header {
			r.Header.Add(name, v)
		}
		if got := tc.p.ClientAddr(r); got != tc.want {
			t.Errorf("%s: ClientAddr = %s, want %s", tc.name, got, tc.want)
		}
	}
	// Only the chosen header is read: through an X-Forwarded-For proxy, a
	// client's own Forwarded header changes nothing.
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "10.1.1.1:5000"
	r.Header.Set("X-Forwarded-For", "203.0.113.9")
	r.Header.Set("Forwarded", "for=1.2.3.4")
	if got := xff.ClientAddr(r); got != "203.0.113.9" {
		t.Errorf("with both headers: %s", got)
	}
}

func TestProxiesHandler(t *testing.T) {
	p, _ := NewProxies([]netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, "")
	var seen string
	h := p.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen = r.RemoteAddr }))
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "127.0.0.1:4000"
	r.Header.Set("X-Forwarded-For", "2001:db8::7")
	h.ServeHTTP(httptest.NewRecorder(), r)
	if seen != "[2001:db8::7]:0" {
		t.Errorf("RemoteAddr below the handler = %q", seen)
	}
}

func TestParseProxy(t *testing.T) {
	for in, want := range map[string]string{"10.0.0.0/8": "10.0.0.0/8", "10.1.2.3/8": "10.0.0.0/8", "127.0.0.1": "127.0.0.1/32", "::1": "::1/128", "fd00::/8": "fd00::/8"} {
		if p, err := ParseProxy(in); err != nil || p.String() != want {
			t.Errorf("ParseProxy(%q) = %v, %v, want %s", in, p, err, want)
		}
	}
	for _, in := range []string{"", "proxy.example", "10.0.0.0/33"} {
		if _, err := ParseProxy(in); err == nil || !strings.Contains(err.Error(), "CIDR") {
			t.Errorf("ParseProxy(%q) = %v, want an error naming the forms", in, err)
		}
	}
	if _, err := NewProxies(nil, "X-Real-IP"); err == nil || !strings.Contains(err.Error(), "X-Forwarded-For or Forwarded") {
		t.Errorf("NewProxies with X-Real-IP: %v", err)
	}
}

// FuzzClientAddr: whatever the forwarding headers hold, the client's address is the
// peer's or one of the header's hops, and never a trusted proxy's unless every hop is one.
func FuzzClientAddr(f *testing.F) {
	f.Add("10.1.1.1:5000", "203.0.113.9, 10.2.2.2", `for="[2001:db8::7]:4711";proto=https`)
	f.Add("[::1]:1", "unknown, ::ffff:1.2.3.4", "for=_x, for=")
	nets := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	xff, _ := NewProxies(nets, "")
	fwd, _ := NewProxies(nets, "Forwarded")
	f.Fuzz(func(t *testing.T, peer, xffValue, fwdValue string) {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = peer
		r.Header.Set("X-Forwarded-For", xffValue)
		r.Header.Set("Forwarded", fwdValue)
		for _, p := range []*Proxies{xff, fwd} {
			got := p.ClientAddr(r)
			if got == PeerAddr(peer) {
				continue
			}
			if _, err := netip.ParseAddr(got); err != nil {
				t.Fatalf("ClientAddr = %q: not an address, not the peer %q", got, peer)
			}
		}
	})
}

// TestKey: the per-address limits count an IPv6 client by its /64 (or
// the prefix asked for), an IPv4 client and a trusted proxy by their
// address.
func TestKey(t *testing.T) {
	p, err := NewProxies([]netip.Prefix{netip.MustParsePrefix("2001:db8:9::5/128")}, "")
	if err != nil {
		t.Fatal(err)
	}
	p128, err := p.WithIPv6Prefix(128)
	if err != nil {
		t.Fatal(err)
	}
	var none *Proxies
	for _, c := range []struct {
		p         *Proxies
		addr, key string
	}{
		{p, "192.0.2.7", "192.0.2.7"},
		{p, "::ffff:192.0.2.7", "192.0.2.7"},
		{p, "2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"},
		{p, "2001:db8:1:2::ffff", "2001:db8:1:2::/64"},
		{p, "fe80::1%eth0", "fe80::/64"},
		{p, "2001:db8:9::5", "2001:db8:9::5"}, // a trusted proxy
		{none, "2001:db8:1:2::1", "2001:db8:1:2::/64"},
		{p128, "2001:db8:1:2::1", "2001:db8:1:2::1"},
		{p, "unix", "unix"},
	} {
		if got := c.p.Key(c.addr); got != c.key {
			t.Errorf("Key(%q) = %q, want %q", c.addr, got, c.key)
		}
	}
	for _, bits := range []int{-1, 15, 129} {
		if _, err := p.WithIPv6Prefix(bits); err == nil || !strings.Contains(err.Error(), "16 to 128") {
			t.Errorf("WithIPv6Prefix(%d): %v, want refused naming what is allowed", bits, err)
		}
	}
}
