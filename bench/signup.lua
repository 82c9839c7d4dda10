-- wrk script for POST /api/signup: a unique address on every request.
--
-- Address = <run>-t<thread>-<counter>@example.com, where <run> is random per wrk
-- invocation (so repeated runs against one database never collide) and <thread>
-- is wrk's thread number. The body has the same shape for signupd and for the
-- ceiling server (examples/bench_ceiling.rs), so both are driven identically.
--
-- usage: wrk -t2 -c64 -d20s -s bench/signup.lua --latency http://127.0.0.1:18080/api/signup

local counter = 1

function setup(thread)
   thread:set("tid", counter)
   counter = counter + 1
end

function init(args)
   math.randomseed(os.time() * 1000 + tid)
   run = string.format("%x%04x", os.time(), math.random(0, 0xffff))
   n = 0
   wrk.method = "POST"
   wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
end

function request()
   n = n + 1
   local body = "email=b" .. run .. "-t" .. tid .. "-" .. n .. "%40example.com&consent=yes&list=news"
   return wrk.format(nil, nil, nil, body)
end

function done(summary, latency, requests)
   io.write(string.format("SUMMARY requests=%d duration_us=%d rps=%.1f p50_us=%d p90_us=%d p99_us=%d max_us=%d socket_errors=%d status_errors=%d\n",
      summary.requests, summary.duration, summary.requests / (summary.duration / 1e6),
      latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max,
      summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout, summary.errors.status))
end
