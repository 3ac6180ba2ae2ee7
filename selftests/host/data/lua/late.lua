-- SPDX-License-Identifier: MIT
-- A coroutine made before meter starts, resumed after (test_lua_counts):
-- its calls after start are counted, and its frames are its own.
local meter = require "meter"

local function tick() return 1 end     -- 3 calls, all after start

local co = coroutine.create(function()
  for _ = 1, 3 do
    coroutine.yield()
    tick()
  end
end)
coroutine.resume(co)                     -- before start: not counted
assert(meter.start())
while coroutine.status(co) ~= "dead" do coroutine.resume(co) end
assert(meter.stop())
assert(not meter.stop())
tick()                                   -- after stop: not counted
