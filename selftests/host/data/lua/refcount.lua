-- SPDX-License-Identifier: MIT
-- lua5.4 refcount.lua OUT SCRIPT ARGS...: runs SCRIPT with a counting hook
-- on every coroutine (call and tail-call events, as meter counts calls)
-- and writes each Lua function's count to OUT as "FILE<TAB>LINE<TAB>N":
-- the reference test_lua_realprog compares meter's counts with.
local out, script = arg[1], arg[2]
local counts = {}

local function hook()
  local info = debug.getinfo(2, "S")
  if info.what ~= "C" then
    local k = info.source .. "\t" .. info.linedefined
    counts[k] = (counts[k] or 0) + 1
  end
end

local cocreate, coresume = coroutine.create, coroutine.resume
coroutine.create = function(f)
  local co = cocreate(f)
  debug.sethook(co, hook, "c")
  return co
end
coroutine.wrap = function(f)
  local co = coroutine.create(f)
  return function(...)
    local r = table.pack(coresume(co, ...))
    if not r[1] then error(r[2], 0) end
    return table.unpack(r, 2, r.n)
  end
end

local chunk = assert(loadfile(script))
arg = { [0] = script, table.unpack(arg, 3) }
debug.sethook(hook, "c")
local ok, err = pcall(chunk, table.unpack(arg))
debug.sethook()
local f = assert(io.open(out, "w"))
for k, n in pairs(counts) do
  local src, line = k:match("^(.*)\t(%-?%d+)$")
  if src:sub(1, 1) == "@" then f:write(src:sub(2), "\t", line, "\t", n, "\n") end
end
f:close()
if not ok then io.stderr:write(tostring(err), "\n") os.exit(1) end
