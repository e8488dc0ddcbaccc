-- One wrk script for every scenario, driven by `key=value` arguments after `--`:
--
--   mode=catalog  file=<keys>   path=<path> [etag=<etag>]   GET path, keys taken in turn
--   mode=progress file=<pairs>                              GET /api/v1/students/<id>/progress
--   mode=enroll   file=<pairs>                              POST /api/v1/students/<id>/enroll
--   mode=hammer   key=<key>     path=<path>                 GET path, always the same key
--   expect=200[,429]                                        statuses that are not errors
--   [limit=<n>]                                             stop each thread after n responses
--                                                           (key-cache fill: every key once)
--
-- Keys are taken in turn from a random start, so over any interval every key carries the same
-- share of the load (the service limits each key to 100 requests a minute); a pairs file holds
-- "key student" lines whose student the key's organisation can see. Requests are formatted once
-- in init() where possible, so the load generator spends its time on the socket, not in Lua.
-- done() prints one JSON line with exact percentiles from wrk's histogram and the status counts
-- that response() collected; bench/lib/wrk.mjs reads it.

local threads = {}

function setup(thread)
  table.insert(threads, thread)
  thread:set("thread_number", #threads)
end

-- Global, not local: done() reads it from each thread with thread:get().
counts = {}
local requests = {}
local pairs_ids = {}
local pairs_keys = {}
local position = 1
local size = 0
local mode
local fixed_request
local limit
local responses = 0

local function options(args)
  local out = {}
  for _, arg in ipairs(args) do
    local name, value = arg:match("^([%w_]+)=(.*)$")
    if name then out[name] = value end
  end
  return out
end

local function lines(file)
  local out = {}
  for line in io.lines(file) do
    if line ~= "" then table.insert(out, line) end
  end
  if #out == 0 then error("no lines in " .. file) end
  return out
end

local TIERS = { "explorer", "builder", "innovator" }

function init(args)
  local opts = options(args)
  mode = opts.mode
  limit = tonumber(opts.limit)
  math.randomseed(os.time() * 1000 + (thread_number or 1) * 7919)
  if mode == "catalog" then
    local headers_extra = opts.etag
    for _, key in ipairs(lines(opts.file)) do
      local headers = { ["Authorization"] = "Bearer " .. key }
      if headers_extra then headers["If-None-Match"] = headers_extra end
      table.insert(requests, wrk.format("GET", opts.path, headers))
    end
    size = #requests
  elseif mode == "progress" or mode == "enroll" then
    for _, line in ipairs(lines(opts.file)) do
      local key, id = line:match("^(%S+)%s+(%S+)$")
      if mode == "progress" then
        table.insert(requests, wrk.format("GET", "/api/v1/students/" .. id .. "/progress", { ["Authorization"] = "Bearer " .. key }))
      else
        table.insert(pairs_keys, key)
        table.insert(pairs_ids, id)
      end
    end
    size = mode == "progress" and #requests or #pairs_ids
  elseif mode == "hammer" then
    fixed_request = wrk.format("GET", opts.path, { ["Authorization"] = "Bearer " .. opts.key })
    size = 1
  else
    error("unknown mode " .. tostring(mode))
  end
  position = math.random(size)
end

function request()
  if fixed_request then return fixed_request end
  local i = position
  position = position + 1
  if position > size then position = 1 end
  if mode == "enroll" then
    return wrk.format("POST", "/api/v1/students/" .. pairs_ids[i] .. "/enroll", {
      ["Authorization"] = "Bearer " .. pairs_keys[i],
      ["Content-Type"] = "application/json",
    }, '{"tier":"' .. TIERS[math.random(3)] .. '"}')
  end
  return requests[i]
end

function response(status, headers, body)
  counts[status] = (counts[status] or 0) + 1
  if limit then
    responses = responses + 1
    if responses == limit then
      -- wrk itself runs for its whole -d; the parent stops it (SIGINT) on seeing this line.
      io.write("LIMIT_REACHED\n")
      io.flush()
      wrk.thread:stop()
    end
  end
end

function done(summary, latency, _)
  local statuses = {}
  for _, thread in ipairs(threads) do
    local c = thread:get("counts")
    if c then
      for status, n in pairs(c) do statuses[status] = (statuses[status] or 0) + n end
    end
  end
  local parts = {}
  for status, n in pairs(statuses) do table.insert(parts, string.format('"%d":%d', status, n)) end
  local e = summary.errors
  io.write(string.format(
    'BENCH_RESULT {"requests":%d,"durationUs":%d,"bytes":%d,' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"latencyUs":{"min":%d,"mean":%.1f,"max":%d,"p50":%d,"p90":%d,"p99":%d,"p999":%d},"statuses":{%s}}\n',
    summary.requests, summary.duration, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency.min, latency.mean, latency.max,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency:percentile(99.9),
    table.concat(parts, ",")))
end
