-- SPDX-License-Identifier: MIT
-- Lua calling a C module built with meter's plugin, which calls back into
-- Lua (test_lua_counts): one stack through both.
local nat = require "meter_native"

local function spin(n)
  local s = 0
  for i = 1, n do s = s + i end
  return s
end

local function cb() spin(1500000) end

local function main()
  nat.call_back(cb, 3)
  nat.native_spin(100000000)
end

main()
