-- wrk script for POST /api/confirm: every request confirms a different pending row.
--
-- The tokens come from a file, one 43-character confirm token a line (bench/growth.sh seeds a
-- pending row for each, with confirm_hash = sha256 hex of the token). Thread k of T sends the
-- tokens on lines k, k+T, k+2T, ...; a thread that runs out starts over, and those requests are
-- repeats (a read-only path), so done() reports how many were sent past the end.
--
-- usage: WRK_THREADS=2 wrk -t2 -c64 -d10s -s bench/confirm.lua --latency URL/api/confirm -- TOKEN_FILE
-- (WRK_THREADS must equal -t: a thread's script cannot see the thread count)

local threads = {}
local counter = 1

function setup(thread)
   thread:set("tid", counter)
   counter = counter + 1
   table.insert(threads, thread)
end

function init(args)
   tokens = {}
   local step = tonumber(os.getenv("WRK_THREADS") or "2")
   local i = 0
   for line in io.lines(args[1]) do
      if i % step == tid - 1 then
         tokens[#tokens + 1] = line
      end
      i = i + 1
   end
   n = 0
   repeats = 0
   wrk.method = "POST"
   wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
end

function request()
   n = n + 1
   local k = n
   if k > #tokens then
      repeats = repeats + 1
      k = (k - 1) % #tokens + 1
   end
   return wrk.format(nil, nil, nil, "token=" .. tokens[k])
end

function done(summary, latency, requests)
   local repeated = 0
   for _, thread in ipairs(threads) do
      repeated = repeated + (thread:get("repeats") or 0)
   end
   io.write(string.format("SUMMARY requests=%d duration_us=%d rps=%.1f p50_us=%d p90_us=%d p99_us=%d max_us=%d socket_errors=%d status_errors=%d repeated_tokens=%d\n",
      summary.requests, summary.duration, summary.requests / (summary.duration / 1e6),
      latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max,
      summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout, summary.errors.status,
      repeated))
end
