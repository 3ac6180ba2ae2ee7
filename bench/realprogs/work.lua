-- The Lua workload of bench/realprogs.sh and selftests/host/test_realprog_counts:
-- recursion, closures, string building and matching, table sort, and
-- errors raised and caught (pcall/error: longjmp inside Lua).
local n = tonumber(arg and arg[1]) or 1

local function fib(k)
	if k < 2 then return k end
	return fib(k - 1) + fib(k - 2)
end

local keys = {}
for i = 1, 20000 * n do
	keys[i] = string.format("k%06d", (i * 7919) % (20000 * n))
end
table.sort(keys)

local caught = 0
for i = 1, 3000 * n do
	local ok, err = pcall(function()
		if i % 3 == 0 then error("bad " .. i) end
		return i
	end)
	if not ok then caught = caught + #err end
end

local parts = {}
for i = 1, 2000 * n do parts[#parts + 1] = tostring(i):rep(3) end
local joined = table.concat(parts, ",")
local words = 0
for _ in joined:gmatch("%d+") do words = words + 1 end

print(fib(20 + n), caught, words, #keys)
