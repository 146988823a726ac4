package chatserver

import (
	"fmt"
	"math"
	"net"
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/wasmgap/wasmgap/chatserver/internal/room"
)

// ValidNick reports why nick cannot be a nickname, or nil when it can.
func ValidNick(nick string) error {
	if why := room.NickProblem(nick); why != "" {
		return refuse(ErrInvalid, "%s", why)
	}
	return nil
}

// validText reports why text cannot be sent, or nil.
func validText(text string, maxBytes int) error {
	if text == "" {
		return refuse(ErrInvalid, "message text is empty: send 1 to %d bytes", maxBytes)
	}
	if len(text) > maxBytes {
		return refuse(ErrTooLarge, "message text is %d bytes: at most %d are allowed", len(text), maxBytes)
	}
	if why := room.TextProblem(text); why != "" {
		return refuse(ErrInvalid, "%s", why)
	}
	return nil
}

// validPost checks a post's fields and says what is wrong and allowed.
func validPost(p Post, maxBytes int) error {
	if err := ValidNick(p.From); err != nil {
		return fmt.Errorf("from: %w", err)
	}
	if p.To != "all" {
		if err := ValidNick(p.To); err != nil {
			return fmt.Errorf("to: %w (or \"all\" for everyone)", err)
		}
	}
	return validText(p.Text, maxBytes)
}

// rateLimits keeps one token bucket per sending nickname.
type rateLimits struct {
	limit rate.Limit
	burst int
	mu    sync.Mutex
	m     map[string]*rate.Limiter
}

func newRateLimits(perSecond float64, burst int) *rateLimits {
	if perSecond < 0 {
		return nil
	}
	return &rateLimits{limit: rate.Limit(perSecond), burst: burst, m: map[string]*rate.Limiter{}}
}

// allow takes one token of nick's bucket; when there is none it returns how
// long until there is.
func (l *rateLimits) allow(nick string) (bool, time.Duration) {
	if l == nil {
		return true, 0
	}
	now := time.Now()
	l.mu.Lock()
	lim := l.m[nick]
	if lim == nil {
		if len(l.m) >= 10000 {
			// Forget senders whose bucket refilled: they are idle.
			for n, x := range l.m {
				if x.TokensAt(now) >= float64(l.burst) {
					delete(l.m, n)
				}
			}
		}
		lim = rate.NewLimiter(l.limit, l.burst)
		l.m[nick] = lim
	}
	l.mu.Unlock()
	r := lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

func (l *rateLimits) describe() string {
	return fmt.Sprintf("at most %g messages per second per nickname, bursts of %d", float64(l.limit), l.burst)
}

// addrLimits counts the open streams of each client address.
type addrLimits struct {
	max int
	mu  sync.Mutex
	m   map[string]int
}

func newAddrLimits(max int) *addrLimits {
	if max < 0 {
		max = math.MaxInt
	}
	return &addrLimits{max: max, m: map[string]int{}}
}

func (l *addrLimits) acquire(addr string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m[addr] >= l.max {
		return false
	}
	l.m[addr]++
	return true
}

func (l *addrLimits) release(addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m[addr] <= 1 {
		delete(l.m, addr)
	} else {
		l.m[addr]--
	}
}

// clientAddr is the IP address of the request's client (a trusted proxy's
// client: the proxies' handler has set RemoteAddr).
func clientAddr(r *http.Request) string { return clientAddrOf(r.RemoteAddr) }

// clientAddrOf is the IP address of a RemoteAddr (host:port).
func clientAddrOf(remote string) string {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		return remote
	}
	return host
}
