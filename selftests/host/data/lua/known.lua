-- SPDX-License-Identifier: MIT
-- A Lua script whose call counts are known (test_lua_counts.sh), written
-- beside each function.
local WORK = tonumber(arg and arg[1]) or 3000000

local function fib(n)              -- 1973 calls: fib(15)
  if n < 2 then return n end
  return fib(n - 1) + fib(n - 2)
end

local function countdown(n)        -- 1001 calls: tail calls, 1000 deep
  if n == 0 then return 0 end
  return countdown(n - 1)
end

local function producer()          -- 1 call, resumed 4 more times
  for i = 1, 4 do coroutine.yield(i) end
end

local function fail(k)             -- 25 calls: 3 pcalls and 2 xpcalls of fail(4)
  if k == 0 then error("down") end
  fail(k - 1)
end

local function spin(n)             -- 3 calls: main, coroutine, wrapped
  local s = 0
  for i = 1, n do s = s + i end
  return s
end

local function in_coroutine()      -- 1 call: its spin is under it
  spin(WORK)
  coroutine.yield()
end

local function cmp(a, b)           -- called by table.sort
  return a < b
end

local Vec = setmetatable({}, {
  __add = function(a, b) return a end,   -- 2 calls, a metamethod
})

local function main()              -- 1 call
  fib(15)
  countdown(1000)
  local co = coroutine.create(producer)
  while coroutine.status(co) ~= "dead" do coroutine.resume(co) end
  for _ = 1, 3 do pcall(fail, 4) end
  for _ = 1, 2 do xpcall(fail, debug.traceback, 4) end
  local c = coroutine.create(in_coroutine)
  coroutine.resume(c)
  local w = coroutine.wrap(function() spin(WORK) end)
  w()
  table.sort({ 5, 3, 9, 1 }, cmp)
  local _ = Vec + Vec
  _ = Vec + Vec
  string.gsub("a,b,c", "%a", function(x) return x end)
  spin(WORK)                       -- its stacks end main;spin
end

main()
