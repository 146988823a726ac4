package nbio

import (
	"net/netip"
	"syscall"
	"testing"
	"unsafe"
)

// TestPeerOf reads accept4's address of each family as net.TCPAddr shows
// it: the port from network byte order, an IPv4 client of an IPv6 socket
// unmapped, an unknown family as no address.
func TestPeerOf(t *testing.T) {
	for _, want := range []string{"127.0.0.1:8080", "[::1]:443", "[fe80::1]:65535", "10.1.2.3:1"} {
		ap := netip.MustParseAddrPort(want)
		var sa syscall.RawSockaddrAny
		var p *[2]byte
		if ap.Addr().Is4() {
			a := (*syscall.RawSockaddrInet4)(unsafe.Pointer(&sa))
			a.Family, a.Addr = syscall.AF_INET, ap.Addr().As4()
			p = (*[2]byte)(unsafe.Pointer(&a.Port))
		} else {
			a := (*syscall.RawSockaddrInet6)(unsafe.Pointer(&sa))
			a.Family, a.Addr = syscall.AF_INET6, ap.Addr().As16()
			p = (*[2]byte)(unsafe.Pointer(&a.Port))
		}
		p[0], p[1] = byte(ap.Port()>>8), byte(ap.Port())
		if got := addrOf(&sa).String(); got != want {
			t.Errorf("addrOf(%s) = %s", want, got)
		}
	}
	mapped := netip.AddrPortFrom(netip.AddrFrom16(netip.MustParseAddr("::ffff:192.0.2.7").As16()), 80)
	var sa syscall.RawSockaddrAny
	a := (*syscall.RawSockaddrInet6)(unsafe.Pointer(&sa))
	a.Family, a.Addr = syscall.AF_INET6, mapped.Addr().As16()
	(*[2]byte)(unsafe.Pointer(&a.Port))[1] = 80
	if got := addrOf(&sa).String(); got != "192.0.2.7:80" {
		t.Errorf("an IPv4 client of an IPv6 socket: %s, want 192.0.2.7:80", got)
	}
	sa = syscall.RawSockaddrAny{}
	sa.Addr.Family = syscall.AF_UNIX
	if got := addrOf(&sa); got.IsValid() {
		t.Errorf("a Unix socket's peer: %s, want none", got)
	}
}
