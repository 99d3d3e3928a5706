-- post.lua is what post_http.lua and post_mcp.lua share: wrk loads one of
-- them, which sets format_request and refused, then this file.
--
--   wrk -t2 -c16 -d10s -s post_http.lua URL -- STAGE RUN
--
-- STAGE is a file of "token SECRET" and "thread ID" lines (parley-lab
-- bench wrk writes it); RUN tags the bodies of one run. Each wrk thread
-- posts with its own share of the tokens, one after the other, into
-- threads picked at random, a note whose body no other request of any run
-- has had: the guard refuses a repeated body, in a thread and (the witness
-- profile) a party's across threads.

local tokens, threads = {}, {}
local tid, run, n = 0, "", 0
local mine = {}
refusals, first_refusal = 0, nil -- read by done() through thread:get

local all = {}

function setup(thread)
  thread:set("tid", #all)
  table.insert(all, thread)
end

function init(args)
  for line in io.lines(args[1]) do
    local k, v = line:match("^(%S+) (%S+)$")
    if k == "token" then table.insert(tokens, v) elseif k == "thread" then table.insert(threads, v) end
  end
  run, tid = args[2] or "0", wrk.thread:get("tid") or 0
  -- the tokens of this wrk thread: every share-th, from its number on
  local share = tonumber(args[3] or "1")
  for i = tid + 1, #tokens, share do table.insert(mine, tokens[i]) end
  if #mine == 0 then mine = tokens end
  math.randomseed(tid * 7919 + 17)
end

function request()
  n = n + 1
  local note = string.format(
    '{"kind":"note","thread":"%s","body":"wrk %s.%d.%d: a measured remark","from":{"extension":"w%d"}}',
    threads[math.random(#threads)], run, tid, n, n % 4)
  return format_request(mine[n % #mine + 1], note, n)
end

function response(status, headers, body)
  if refused(status, body) then
    refusals = refusals + 1
    if first_refusal == nil then first_refusal = status .. " " .. body:sub(1, 300) end
  end
end

function done(summary, latency, requests)
  local total, first = 0, nil
  for _, t in ipairs(all) do
    total = total + t:get("refusals")
    first = first or t:get("first_refusal")
  end
  local e = summary.errors
  io.write(string.format("parley-wrk requests=%d seconds=%.3f refused=%d socket_errors=%d p50_ms=%.2f p99_ms=%.2f\n",
    summary.requests, summary.duration / 1e6, total, e.connect + e.read + e.write + e.timeout,
    latency:percentile(50) / 1000, latency:percentile(99) / 1000))
  if first then io.write("parley-wrk first_refusal=" .. first .. "\n") end
end
