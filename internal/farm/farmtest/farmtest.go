// Package farmtest starts what a bench farm stands on for the tests and the one-machine
// demo: an embedded NATS server with JetStream on loopback that admits only the holders
// of its nkeys, each agent with the rights docs/FARM.md gives an agent.
package farmtest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"
)

// Bench is the user with every right: the one that publishes jobs (bench --farm, the
// page's server). Every other user is an agent.
const Bench = "bench"

// AgentPermissions are an agent's rights on the farm's server, as docs/FARM.md gives
// them: JetStream's API, acks, its results and its registration; never a job.
var AgentPermissions = &server.Permissions{
	Publish: &server.SubjectPermission{
		Allow: []string{"$JS.API.>", "$JS.ACK.FARM_JOBS.>", "farm.result.>", "$KV.farm-agents.>"},
		Deny:  []string{"farm.job.>"},
	},
	Subscribe: &server.SubjectPermission{Allow: []string{"_INBOX.>"}},
}

// NATS is a running embedded NATS server.
type NATS struct {
	// URL is the server's client URL, nats://127.0.0.1:port.
	URL string
	// Seeds maps each user to the file holding its nkey seed (mode 0600).
	Seeds map[string]string
	srv   *server.Server
}

// StartNATS starts a NATS server with JetStream on 127.0.0.1, its store and the users'
// seed files in dir, admitting only the users named (Bench with every right, the others
// with AgentPermissions). Stop it with Shutdown.
func StartNATS(dir string, users ...string) (*NATS, error) {
	n := &NATS{Seeds: map[string]string{}}
	var nk []*server.NkeyUser
	for _, u := range users {
		kp, err := nkeys.CreateUser()
		if err != nil {
			return nil, err
		}
		pub, err := kp.PublicKey()
		if err != nil {
			return nil, err
		}
		seed, err := kp.Seed()
		if err != nil {
			return nil, err
		}
		path := filepath.Join(dir, u+".nk")
		if err := os.WriteFile(path, seed, 0o600); err != nil {
			return nil, err
		}
		n.Seeds[u] = path
		user := &server.NkeyUser{Nkey: pub}
		if u != Bench {
			user.Permissions = AgentPermissions
		}
		nk = append(nk, user)
	}
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoSigs: true, NoLog: true, JetStream: true, StoreDir: filepath.Join(dir, "nats"), Nkeys: nk})
	if err != nil {
		return nil, fmt.Errorf("NATS server: %w", err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(30 * time.Second) {
		srv.Shutdown()
		return nil, errors.New("the NATS server did not start within 30s")
	}
	n.srv, n.URL = srv, srv.ClientURL()
	return n, nil
}

// Shutdown stops the server.
func (n *NATS) Shutdown() { n.srv.Shutdown() }
