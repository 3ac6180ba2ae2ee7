-- SPDX-License-Identifier: MIT
-- Debian's dkjson (lua-dkjson) encoding and decoding a large document, a
-- real program for test_lua_realprog.sh: N records of nested tables,
-- encoded and decoded back.
local json = require "dkjson"
local n = tonumber(arg[1]) or 2000

local doc = {}
for i = 1, n do
  doc[i] = {
    id = i,
    name = "item " .. i,
    tags = { "a" .. i % 7, "b" .. i % 11, "c" .. i % 13 },
    price = i * 1.25,
    active = i % 3 == 0,
    nested = { depth = { level = i % 5, note = "x\ty\n" .. i } },
  }
end
local keyorder = { "id", "name", "tags", "price", "active", "nested" }
local text = json.encode(doc, { indent = true, keyorder = keyorder })
local back = assert(json.decode(text))
assert(#back == n and back[n].nested.depth.note == doc[n].nested.depth.note)
print(#text)
