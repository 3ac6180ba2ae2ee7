-- SPDX-License-Identifier: MIT
-- A Lua profiler written the usual way, for bench/lua.sh to compare with:
-- debug.sethook on call and return, a count and os.clock() time per
-- function (keyed as meter keys them: source and line defined), the hook
-- set on every coroutine.  lua5.4 lua_hookprof.lua SCRIPT ARGS...
local script = arg[1]
local calls, time, stack = {}, {}, {}
local clock = os.clock

local function hook(ev)
  local now = clock()
  local info = debug.getinfo(2, "S")
  local k = info.source .. ":" .. info.linedefined
  if ev == "call" or ev == "tail call" then
    calls[k] = (calls[k] or 0) + 1
    stack[#stack + 1] = now
  else
    local t0 = table.remove(stack)
    if t0 then time[k] = (time[k] or 0) + now - t0 end
  end
end

local cocreate = coroutine.create
coroutine.create = function(f)
  local co = cocreate(f)
  debug.sethook(co, hook, "cr")
  return co
end

local chunk = assert(loadfile(script))
arg = { [0] = script, table.unpack(arg, 2) }
debug.sethook(hook, "cr")
chunk(table.unpack(arg))
debug.sethook()
