-- The articles' kernels in Lua, and the driver that serves them over the line protocol of
-- package engine/driver (see ../../driver/driver.go): one request a line on stdin, one
-- answer a line on stdout. The kernels follow kernels/recursion.go and kernels/loops.go.
-- One file runs on Lua 5.4 and on LuaJIT (with its JIT, or -joff for its interpreter).
--
-- Numbers: Lua 5.4 has 64-bit integers that wrap as Go's int64 does, so every value is
-- exact. LuaJIT's numbers are doubles, exact for integers up to 2^53: every kernel's value
-- stays below that over the catalogue's ranges except the Fibonacci numbers past fib(78), so
-- on LuaJIT fib_it computes those with FFI int64_t (wrapping as Go's int64 does) and
-- fib_rec refuses them (at n > 78 it would run for days anyway); the sum over repetitions
-- is carried in an int64_t there too.
--
-- Clocks: LuaJIT's driver reads CLOCK_MONOTONIC through the FFI. Lua 5.4's standard library
-- has no wall clock finer than a second, so its driver times the calls with os.clock, the
-- process's CPU time (microsecond resolution): the same as wall time for a kernel that
-- computes and does not wait, which is all of them.

local jit = rawget(_G, "jit")
local ffi = jit and require("ffi")

-- ---- the recursion kernels (kernels/recursion.go) ----

local FIB_MAX_EXACT = 78

local function fib_it(n)
  local a, b = 0, 1
  for _ = 1, n do
    a, b = b, a + b
  end
  return a
end

-- fib_it_int64 is fib_it with LuaJIT's int64_t arithmetic, for n past FIB_MAX_EXACT.
local function fib_it_int64(n)
  local a, b = ffi.new("int64_t", 0), ffi.new("int64_t", 1)
  for _ = 1, n do
    a, b = b, a + b
  end
  return a
end

local function fib_rec(n)
  if n < 3 then return 1 end
  return fib_rec(n - 1) + fib_rec(n - 2)
end

local function ack(n, m)
  if n == 0 then
    return m + 1
  elseif m == 0 then
    return ack(n - 1, 1)
  end
  return ack(n - 1, ack(n, m - 1))
end

local function ack_while(n, m)
  while n ~= 0 do
    if m == 0 then
      m = 1
    else
      m = ack_while(n, m - 1)
    end
    n = n - 1
  end
  return m + 1
end

-- ---- the loop kernels (kernels/loops.go) ----
-- Lua's arrays are tables indexed from 1: big_array's element i (from 0) is at i + 1.

local SMALL_ARRAY_START = 20000

local function big_array(size)
  local a = {}
  for i = 0, size - 1 do a[i + 1] = i * 2 end
  return a
end

local function small_array(size)
  local a = {}
  for i = 0, size - 1 do a[i + 1] = (SMALL_ARRAY_START + i) * 2 end
  return a
end

-- test1 and test1b: Lua has one equality (no loose ==), so both run the same loop, with
-- ipairs as Go's range.
local function test1(big, small)
  local array, array2 = big_array(big), small_array(small)
  local sum = 0
  for _, val in ipairs(array) do
    for _, val2 in ipairs(array2) do
      if val == val2 then sum = sum + val end
    end
  end
  return sum
end

local test1b = test1

local function test2(big, small)
  local array, array2 = big_array(big), small_array(small)
  local sum = 0
  for _, val2 in ipairs(array2) do
    for _, val in ipairs(array) do
      if val == val2 then sum = sum + val end
    end
  end
  return sum
end

-- test3 and test4: iterate the keys, read both values by index.
local function test3(big, small)
  local array, array2 = big_array(big), small_array(small)
  local sum = 0
  for key in ipairs(array) do
    for key2 in ipairs(array2) do
      if array[key] == array2[key2] then sum = sum + array[key] end
    end
  end
  return sum
end

local function test4(big, small)
  local array, array2 = big_array(big), small_array(small)
  local sum = 0
  for key2 in ipairs(array2) do
    for key in ipairs(array) do
      if array[key] == array2[key2] then sum = sum + array[key] end
    end
  end
  return sum
end

-- test5 and test6: numeric for loops over the counts.
local function test5(big, small)
  local array, array2 = big_array(big), small_array(small)
  local sum = 0
  local count, count2 = #array, #array2
  for key = 1, count do
    for key2 = 1, count2 do
      if array[key] == array2[key2] then sum = sum + array[key] end
    end
  end
  return sum
end

local function test6(big, small)
  local array, array2 = big_array(big), small_array(small)
  local sum = 0
  local count, count2 = #array, #array2
  for key2 = 1, count2 do
    for key = 1, count do
      if array[key] == array2[key2] then sum = sum + array[key] end
    end
  end
  return sum
end

local function checksum(a)
  local sum = 0
  for _, v in ipairs(a) do sum = sum + v end
  return sum
end

-- count is PHP's count(): a call per use.
local function count(a)
  return #a
end

-- test7: Lua has no references, so each element is written back through its key as the
-- loop visits it.
local function test7(large)
  local array = big_array(large)
  for key, val in ipairs(array) do array[key] = val + 1 end
  return checksum(array)
end

-- test8: the condition calls count on every turn, as PHP's for loop does.
local function test8(large)
  local array = big_array(large)
  local key = 1
  while key <= count(array) do
    array[key] = array[key] + 1
    key = key + 1
  end
  return checksum(array)
end

local function test8b(large)
  local array = big_array(large)
  local n = count(array)
  for key = 1, n do array[key] = array[key] + 1 end
  return checksum(array)
end

-- ---- the driver ----

-- A parameter's allowed range: the catalogue's (kernels/catalogue.go).
local FIB_N = { "n", 0, 92 }
local ACK_N = { "n", 0, 3 }
local ACK_M = { "m", 0, 20 }
local BIG = { "big", 1, 1000000 }
local SMALL = { "small", 1, 100000 }
local LARGE = { "large", 1, 10000000 }

local fib_it_call = fib_it
if jit then
  fib_it_call = function(n)
    if n > FIB_MAX_EXACT then return fib_it_int64(n) end
    return fib_it(n)
  end
end

local KERNELS = {
  fib_it = { fib_it_call, { FIB_N } },
  fib_rec = { fib_rec, { FIB_N } },
  ack_while = { ack_while, { ACK_N, ACK_M } },
  ack = { ack, { ACK_N, ACK_M } },
  test1 = { test1, { BIG, SMALL } },
  test1b = { test1b, { BIG, SMALL } },
  test2 = { test2, { BIG, SMALL } },
  test3 = { test3, { BIG, SMALL } },
  test4 = { test4, { BIG, SMALL } },
  test5 = { test5, { BIG, SMALL } },
  test6 = { test6, { BIG, SMALL } },
  test7 = { test7, { LARGE } },
  test8 = { test8, { LARGE } },
  test8b = { test8b, { LARGE } },
}

local MAX_REPS = 1000000000
local USAGE = "want <kernel> <reps> <arg1> [<arg2>]"

-- toint parses a decimal integer, or returns nil.
local function toint(s)
  if not s:match("^[+-]?%d+$") then return nil end
  local v = tonumber(s)
  if math.tointeger then v = math.tointeger(v) end
  return v
end

local now, show, zero
if jit then
  ffi.cdef [[
    typedef struct { long tv_sec; long tv_nsec; } wasmgap_timespec;
    int clock_gettime(int clk, wasmgap_timespec *ts);
  ]]
  local ts = ffi.new("wasmgap_timespec")
  local CLOCK_MONOTONIC = 1
  now = function()
    ffi.C.clock_gettime(CLOCK_MONOTONIC, ts)
    return ffi.new("int64_t", ts.tv_sec) * 1000000000 + ts.tv_nsec
  end
  -- show prints a number or an int64_t as a decimal integer.
  show = function(v)
    return (tostring(ffi.new("int64_t", v)):gsub("LL$", ""))
  end
  zero = function() return ffi.new("int64_t", 0) end
else
  now = function() return math.floor(os.clock() * 1e9) end
  show = function(v) return string.format("%d", v) end
  zero = function() return 0 end
end

local MAX_SAMPLES = 1000
local TIMES_USAGE = "want times <kernel> <samples> <group> <arg1> [<arg2>]"

-- parse checks a request's fields, <kernel> <reps> <args...>: it returns the kernel's
-- function, name, reps and two arguments, or the error answer alone.
local function parse(f)
  if #f == 0 then return "error empty request: " .. USAGE end
  if #f < 3 then return "error too few fields: " .. USAGE end
  if #f > 4 then return "error too many fields: " .. USAGE end
  local name = f[1]
  local k = KERNELS[name]
  if k == nil then return string.format('error unknown kernel "%s"', name) end
  local fn, params = k[1], k[2]
  local reps = toint(f[2]) or 0
  if reps < 1 or reps > MAX_REPS then
    return string.format('error reps "%s" is not allowed: want an integer from 1 to %d', f[2], MAX_REPS)
  end
  if #f - 2 ~= #params then
    return string.format("error %s takes %d arguments, got %d", name, #params, #f - 2)
  end
  local args = {}
  for i, p in ipairs(params) do
    local s = f[2 + i]
    local v = toint(s)
    if v == nil then return string.format('error %s: %s = "%s" is not an integer', name, p[1], s) end
    if v < p[2] or v > p[3] then
      return string.format('error %s: %s = "%s" is out of range: allowed %d to %d', name, p[1], s, p[2], p[3])
    end
    args[i] = v
  end
  if jit and name == "fib_rec" and args[1] > FIB_MAX_EXACT then
    return string.format("error fib_rec(%d) exceeds 2^53, past a LuaJIT number's exact integers: allowed n up to %d", args[1], FIB_MAX_EXACT)
  end
  return fn, name, reps, args[1], args[2]
end

-- failure is the answer to an error a kernel raised.
local function failure(name, err)
  local msg = tostring(err):gsub("\n", " ")
  if msg:find("stack overflow", 1, true) then
    return string.format("error stack overflow: %s exhausted Lua's stack (%s)", name, msg)
  end
  return string.format("error %s: %s", name, msg)
end

-- serveTimes answers "times <kernel> <samples> <group> <args...>" (f[1] is "times"):
-- samples × group calls, the clock read between every group.
local function serveTimes(f)
  if #f < 5 then return "error too few fields: " .. TIMES_USAGE end
  local samples = toint(f[3]) or 0
  if samples < 1 or samples > MAX_SAMPLES then
    return string.format('error samples "%s" is not allowed: want an integer from 1 to %d', f[3], MAX_SAMPLES)
  end
  local g = { f[2] }
  for i = 4, #f do g[#g + 1] = f[i] end
  local fn, name, group, a1, a2 = parse(g)
  if name == nil then return fn end
  local times = {}
  local ok, first, sum = pcall(function()
    local first
    local sum = zero()
    for i = 1, samples do
      local start = now()
      local v = fn(a1, a2)
      local part = zero() + v
      for _ = 2, group do part = part + fn(a1, a2) end
      times[i] = show(now() - start)
      if i == 1 then first = v end
      sum = sum + part
    end
    return first, sum
  end)
  if not ok then return failure(name, first) end
  return string.format("times %s %s %s", show(first), show(sum), table.concat(times, " "))
end

local function serve(line)
  local f = {}
  for w in line:gmatch("%S+") do f[#f + 1] = w end
  if f[1] == "times" then return serveTimes(f) end
  local fn, name, reps, a1, a2 = parse(f)
  if name == nil then return fn end
  local start = now()
  local ok, first, sum = pcall(function()
    local first = fn(a1, a2)
    local sum = zero() + first
    for _ = 2, reps do sum = sum + fn(a1, a2) end
    return first, sum
  end)
  local elapsed = now() - start
  if not ok then return failure(name, first) end
  return string.format("ok %s %s %s", show(first), show(sum), show(elapsed))
end

local runtime = jit and jit.version or _VERSION
if jit and not jit.status() then runtime = runtime .. " (JIT off)" end
io.stdout:setvbuf("no")
io.stdout:write("ready lua " .. runtime .. "\n")
for line in io.stdin:lines() do
  io.stdout:write(serve(line) .. "\n")
end
