package miniredis

import (
	"bufio"
	"bytes"
	"math/rand"

	lua "github.com/yuin/gopher-lua"

	luajson "github.com/dispatchsim/dispatchsim/third_party/miniredis/gopher-json"
	"github.com/dispatchsim/dispatchsim/third_party/miniredis/server"
)

const msgReadonlyTable = "Attempt to modify a readonly table"

// luaVM is a Lua state with the redis module, for one script at a time.
type luaVM struct {
	l       *lua.LState
	srv     *server.Server
	globals *lua.LTable // where globals are stored; KEYS and ARGV are set here
	run     luaRun      // the script running now

	// redis.call's peer and reply buffers, reused from call to call.
	peer   server.Peer
	reply  bytes.Buffer
	replyW *bufio.Writer
	replyR *bufio.Reader

	// With read-only tables: the stand-in scripts see for each protected table,
	// and the contents each stand-in reads through to.
	stand map[*lua.LTable]*lua.LTable
	view  map[*lua.LTable]*lua.LTable
	rand  *rand.Rand // math.random's source, so scripts never touch the process-wide one
}

// luaRun is what the redis module needs to know about the running script.
type luaRun struct {
	peer     *server.Peer
	sha      string
	readOnly bool
	callCtx  *connCtx // redis.call's connection
	pcallCtx *connCtx // redis.pcall's connection
}

// newLuaVM builds a VM with the libraries scripts may use. With readOnly the
// globals and library tables cannot be changed, as in Redis 7, so the VM can
// be kept for the next script.
func newLuaVM(srv *server.Server, readOnly bool) *luaVM {
	l := lua.NewState(lua.Options{SkipOpenLibs: true})
	vm := &luaVM{l: l, srv: srv, globals: l.G.Global}
	vm.replyW = bufio.NewWriter(&vm.reply)
	vm.replyR = bufio.NewReader(&vm.reply)

	// Taken from the go-lua manual
	for _, pair := range []struct {
		n string
		f lua.LGFunction
	}{
		{lua.LoadLibName, lua.OpenPackage},
		{lua.BaseLibName, lua.OpenBase},
		{lua.CoroutineLibName, lua.OpenCoroutine},
		{lua.TabLibName, lua.OpenTable},
		{lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath},
		{lua.DebugLibName, lua.OpenDebug},
	} {
		if err := l.CallByParam(lua.P{
			Fn:      l.NewFunction(pair.f),
			NRet:    0,
			Protect: true,
		}, lua.LString(pair.n)); err != nil {
			panic(err)
		}
	}

	luajson.Preload(l)
	requireGlobal(l, "cjson", "json")

	redisFuncs, redisConstants := mkLua(vm)
	redisMod := l.CreateTable(0, len(redisFuncs)+len(redisConstants))
	for fname, fn := range redisFuncs {
		redisMod.RawSetString(fname, l.NewFunction(fn))
	}
	for k, v := range redisConstants {
		redisMod.RawSetString(k, v)
	}
	for _, name := range []string{"redis", "server"} {
		l.SetGlobal(name, redisMod)
	}

	l.RegisterModule("os", mkLuaOS())

	if readOnly {
		vm.lockGlobals()
	} else {
		_ = doScript(l, protectGlobals)
		l.SetTop(0)
	}
	return vm
}

// begin sets up the redis module for the script about to run on c.
func (vm *luaVM) begin(c *server.Peer, sha string, readOnly bool) {
	vm.run = luaRun{
		peer:     c,
		sha:      sha,
		readOnly: readOnly,
		callCtx:  nestedCtx(c, sha),
		pcallCtx: nestedCtx(c, sha),
	}
}

// end forgets the script that ran, so the VM holds no peer between scripts.
func (vm *luaVM) end() {
	vm.run = luaRun{}
}

// nestedCtx is the connection state of commands a script on c runs.
func nestedCtx(c *server.Peer, sha string) *connCtx {
	ctx := getCtx(c)
	return &connCtx{
		authenticated: ctx.authenticated,
		nested:        true,
		nestedSHA:     sha,
		selectedDB:    ctx.selectedDB,
	}
}

// dropLua discards the kept VM; the next script builds a new one.
func (m *Miniredis) dropLua() {
	if m.lua != nil {
		m.lua.l.Close()
		m.lua = nil
	}
}

// lockGlobals makes the globals and every table reachable from them
// read-only, which Redis 7 does so that scripts sharing one VM cannot leak
// state into each other: writing a global or a library field fails with
// "Attempt to modify a readonly table", and reading a global that does not
// exist fails too.
//
// gopher-lua has no read-only tables, so each protected table is replaced by
// an empty stand-in whose metatable reads through to a copy of the contents
// and refuses writes. The functions that write past a metatable (rawset,
// setmetatable, table.insert, table.remove, table.sort) refuse stand-ins, and
// rawget, getmetatable, next and pairs see through them. The functions Redis 7
// does not offer that reach around this (getfenv, setfenv, require, module,
// package, loadfile, dofile) are left out.
func (vm *luaVM) lockGlobals() {
	l := vm.l
	g := l.G.Global
	for _, name := range []string{"getfenv", "setfenv", "require", "module", "package", "loadfile", "dofile", "debug"} {
		g.RawSetString(name, lua.LNil)
	}

	// math.random draws from the VM's own source, from the same seed in every
	// new VM, so that scripts stay deterministic.
	vm.rand = rand.New(rand.NewSource(0))
	if math, ok := g.RawGetString("math").(*lua.LTable); ok {
		math.RawSetString("random", l.NewFunction(vm.mathRandom))
		math.RawSetString("randomseed", l.NewFunction(func(l *lua.LState) int {
			vm.rand.Seed(l.CheckInt64(1))
			return 0
		}))
	}
	vm.wrapTableWrites(g.RawGetString("table"), "insert", "remove", "sort")
	vm.wrapTableWrites(g, "rawset")
	orig := func(name string) lua.LGFunction {
		if f, ok := g.RawGetString(name).(*lua.LFunction); ok && f.IsG {
			return f.GFunction
		}
		return func(l *lua.LState) int { return 0 }
	}
	next, rawget := orig("next"), orig("rawget")
	g.RawSetString("rawget", l.NewFunction(func(l *lua.LState) int {
		l.Replace(1, vm.contents(l.CheckTable(1)))
		return rawget(l)
	}))
	nextFn := l.NewFunction(func(l *lua.LState) int {
		l.Replace(1, vm.contents(l.CheckTable(1)))
		return next(l)
	})
	g.RawSetString("next", nextFn)
	g.RawSetString("pairs", l.NewFunction(func(l *lua.LState) int {
		tb := l.CheckTable(1)
		l.Push(nextFn)
		l.Push(vm.contents(tb))
		l.Push(lua.LNil)
		return 3
	}))
	g.RawSetString("setmetatable", l.NewFunction(func(l *lua.LState) int {
		tb := l.CheckTable(1)
		l.CheckTypes(2, lua.LTNil, lua.LTTable)
		if vm.isStandIn(tb) {
			l.RaiseError(msgReadonlyTable)
		}
		l.SetMetatable(tb, l.Get(2))
		l.SetTop(1)
		return 1
	}))

	// The string metatable is reachable with getmetatable(""): lock it too.
	stringMeta, _ := l.GetMetatable(lua.LString("")).(*lua.LTable)
	g.RawSetString("getmetatable", l.NewFunction(func(l *lua.LState) int {
		v := l.CheckAny(1)
		switch {
		case v.Type() == lua.LTString && stringMeta != nil:
			l.Push(vm.stand[stringMeta])
		case v.Type() == lua.LTTable && vm.isStandIn(v.(*lua.LTable)):
			l.Push(lua.LNil)
		default:
			l.Push(l.GetMetatable(v))
		}
		return 1
	}))

	vm.stand = map[*lua.LTable]*lua.LTable{g: g}
	vm.view = map[*lua.LTable]*lua.LTable{}
	if stringMeta != nil {
		vm.protect(stringMeta)
	}
	globals := vm.copyContents(g)
	var names []lua.LValue
	g.ForEach(func(k, _ lua.LValue) { names = append(names, k) })
	for _, k := range names {
		g.RawSet(k, lua.LNil)
	}
	globals.Metatable = l.SetFuncs(l.NewTable(), map[string]lua.LGFunction{
		"__index": func(l *lua.LState) int {
			l.RaiseError("Script attempted to access nonexistent global variable '%s'", l.CheckAny(2).String())
			return 0
		},
	})
	vm.lock(g, globals)
	vm.globals = globals
}

// protect returns the read-only stand-in for t.
func (vm *luaVM) protect(t *lua.LTable) *lua.LTable {
	if s, ok := vm.stand[t]; ok {
		return s
	}
	s := vm.l.NewTable()
	vm.stand[t] = s
	vm.lock(s, vm.copyContents(t))
	return s
}

// copyContents copies t's fields, with tables replaced by their stand-ins,
// in t's own order.
func (vm *luaVM) copyContents(t *lua.LTable) *lua.LTable {
	c := vm.l.NewTable()
	for k, v := t.Next(lua.LNil); k != lua.LNil; k, v = t.Next(k) {
		if tv, ok := v.(*lua.LTable); ok {
			v = vm.protect(tv)
		}
		c.RawSet(k, v)
	}
	return c
}

// lock makes stand-in s read through to contents and refuse writes.
func (vm *luaVM) lock(s, contents *lua.LTable) {
	vm.view[s] = contents
	s.Metatable = vm.l.SetFuncs(vm.l.NewTable(), map[string]lua.LGFunction{
		"__newindex": func(l *lua.LState) int {
			l.RaiseError(msgReadonlyTable)
			return 0
		},
	})
	s.Metatable.(*lua.LTable).RawSetString("__index", contents)
}

func (vm *luaVM) isStandIn(t *lua.LTable) bool {
	_, ok := vm.view[t]
	return ok
}

// contents is what t holds: a stand-in's contents, or t itself.
func (vm *luaVM) contents(t *lua.LTable) *lua.LTable {
	if c, ok := vm.view[t]; ok {
		return c
	}
	return t
}

// wrapTableWrites makes the named functions of lib refuse a stand-in as
// their first argument.
func (vm *luaVM) wrapTableWrites(lib lua.LValue, names ...string) {
	t, ok := lib.(*lua.LTable)
	if !ok {
		return
	}
	for _, name := range names {
		f, ok := t.RawGetString(name).(*lua.LFunction)
		if !ok || !f.IsG {
			continue
		}
		write := f.GFunction
		t.RawSetString(name, vm.l.NewFunction(func(l *lua.LState) int {
			if vm.isStandIn(l.CheckTable(1)) {
				l.RaiseError(msgReadonlyTable)
			}
			return write(l)
		}))
	}
}

// mathRandom is gopher-lua's math.random on the VM's source.
func (vm *luaVM) mathRandom(l *lua.LState) int {
	switch l.GetTop() {
	case 0:
		l.Push(lua.LNumber(vm.rand.Float64()))
	case 1:
		n := l.CheckInt(1)
		l.Push(lua.LNumber(vm.rand.Intn(n) + 1))
	default:
		min := l.CheckInt(1)
		max := l.CheckInt(2) + 1
		l.Push(lua.LNumber(vm.rand.Intn(max-min) + min))
	}
	return 1
}
