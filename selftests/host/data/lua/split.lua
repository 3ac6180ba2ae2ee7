-- SPDX-License-Identifier: MIT
-- A Lua script whose self time splits 50/30/20 between three functions
-- that run the same loop 5, 3 and 2 times as often, in rounds
-- (selftests/vm/interp_split.sh, on the VM's deterministic clock).
local n = tonumber(arg[1]) or 200000
local rounds = tonumber(arg[2]) or 10

local function heavy() local s = 0 for i = 1, 5 * n do s = s + i end return s end
local function medium() local s = 0 for i = 1, 3 * n do s = s + i end return s end
local function light() local s = 0 for i = 1, 2 * n do s = s + i end return s end

for _ = 1, rounds do
  heavy()
  medium()
  light()
end
