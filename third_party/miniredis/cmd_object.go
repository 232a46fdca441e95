package miniredis

import (
	"fmt"
	"strings"

	"github.com/dispatchsim/dispatchsim/third_party/miniredis/server"
)

// commandsObject handles all object operations.
func commandsObject(m *Miniredis) {
	m.srv.Register("OBJECT", m.cmdObject, server.ReadOnlyOption())
}

// OBJECT
func (m *Miniredis) cmdObject(c *server.Peer, cmd string, args []string) {
	if !m.isValidCMD(c, cmd, args, atLeast(1)) {
		return
	}

	switch sub := strings.ToLower(args[0]); sub {
	case "idletime":
		m.cmdObjectIdletime(c, args[1:])
	default:
		setDirty(c)
		c.WriteError(fmt.Sprintf(msgFObjectUsage, sub))
	}
}

// OBJECT IDLETIME
func (m *Miniredis) cmdObjectIdletime(c *server.Peer, args []string) {
	if len(args) != 1 {
		setDirty(c)
		c.WriteError(errWrongNumber("object|idletime"))
		return
	}
	key := args[0]

	withTx(m, c, func(c *server.Peer, ctx *connCtx) {
		db := m.db(ctx.selectedDB)

		t, ok := db.lru[key]
		if !ok {
			c.WriteNull()
			return
		}

		c.WriteInt(int(db.master.effectiveNow().Sub(t).Seconds()))
	})
}
