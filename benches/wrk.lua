-- wrk script for benches/http-load.sh: one request shape per run, every response's status
-- counted, and one machine-readable summary line.
--
--   wrk -t2 -c64 -d10s --latency -s benches/wrk.lua URL -- EXPECT [METHOD [BODY [HEADER...]]]
--
-- EXPECT is the one status that counts as a success (200, or 202 for durable bets and
-- notarizations); METHOD defaults to GET; BODY is sent as application/json; each HEADER is
-- "Name: value". After the run, `done` prints
--
--   wrk-result requests=N ok=N duration_s=S ok_per_s=R p50_ms=X p99_ms=Y connect=N read=N
--     write=N timeout=N statuses=200:N,429:N
--
-- on one line (statuses: every status seen, in ascending order). Latency percentiles are
-- wrk's, over all responses (wrk does not keep them per status): a run whose responses are
-- not all EXPECT is flagged by the caller instead.

local threads = {}

function setup(thread)
   table.insert(threads, thread)
end

function init(args)
   expect = tonumber(args[1]) or 200
   wrk.method = args[2] or "GET"
   if args[3] and args[3] ~= "" then
      wrk.body = args[3]
      wrk.headers["Content-Type"] = "application/json"
   end
   for i = 4, #args do
      local name, value = args[i]:match("^([^:]+):%s*(.*)$")
      if name then
         wrk.headers[name] = value
      end
   end
   wrk.headers["Accept"] = "application/json"
   counts = {}
end

function response(status, headers, body)
   counts[status] = (counts[status] or 0) + 1
end

function done(summary, latency, requests)
   local total = {}
   for _, thread in ipairs(threads) do
      local c = thread:get("counts")
      for status, n in pairs(c) do
         total[status] = (total[status] or 0) + n
      end
   end
   local expect = tonumber(threads[1]:get("expect"))
   local statuses, keys = {}, {}
   for status in pairs(total) do
      table.insert(keys, status)
   end
   table.sort(keys)
   for _, status in ipairs(keys) do
      table.insert(statuses, string.format("%d:%d", status, total[status]))
   end
   local ok = total[expect] or 0
   local secs = summary.duration / 1e6
   local e = summary.errors
   io.write(string.format(
      "wrk-result requests=%d ok=%d duration_s=%.3f ok_per_s=%.1f p50_ms=%.3f p99_ms=%.3f "
         .. "connect=%d read=%d write=%d timeout=%d statuses=%s\n",
      summary.requests, ok, secs, ok / secs,
      latency:percentile(50) / 1000, latency:percentile(99) / 1000,
      e.connect, e.read, e.write, e.timeout,
      #statuses > 0 and table.concat(statuses, ",") or "none"))
end
