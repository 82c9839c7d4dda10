-- wrk script for bench/flood.sh: a subscription-bombing flood of POST /api/signup through a
-- trusted proxy. Every request carries its own client address in CF-Connecting-IP (signupd must
-- trust the loopback peer: server.trusted_proxies = ["127.0.0.1"]) and its own victim address.
--
-- Environment (read by every wrk thread):
--   FLOOD_MODE=v6         clients are /64s of one IPv6 /48: 2001:db8:1:<x>::1, x = 0..ffff in turn
--   FLOOD_MODE=v4         clients are hosts .1-.254 of FLOOD_NETS IPv4 /24s, 10.100.<k>.<h>,
--                         the networks taken in turn (request g goes to network g % FLOOD_NETS)
--   FLOOD_NETS=200        (v4) how many /24s
--   FLOOD_THREADS=2       must equal wrk's -t, so the threads' clients interleave without overlap
--   FLOOD_LISTS=news      comma-separated list ids, taken in turn
--   REPEAT_EVERY=4        one request in REPEAT_EVERY (drawn at random, so independent of the
--                         client and its network) names one of REPEAT_VICTIMS fixed addresses
--   REPEAT_VICTIMS=3      (repeat-<k>@example.net), each going through the lists in turn:
--                         several lists x one address exercises the per-address cap
--   Other requests name a new address each: victim-<run>-t<thread>-<n>@example.net.
--
-- Flood level L0 of bench/flood.sh: the answers are counted, never followed (no GET of the form
-- before, no press after a surge answer).
--
-- done() prints one line: FLOOD requests=N duration_us=N rps=R s303=N s303_send=N s429=N other=N
-- socket_errors=N (statuses counted by each thread's response(); s303_send: the 303s to the surge
-- page, a Location with `send=`; 429 is what wrk would call a status error).

local counter = 1
local threads = {}

function setup(thread)
   thread:set("tid", counter)
   table.insert(threads, thread)
   counter = counter + 1
end

local function split(s)
   local out = {}
   for item in string.gmatch(s, "[^,]+") do
      table.insert(out, item)
   end
   return out
end

function init(args)
   math.randomseed(os.time() * 1000 + tid)
   run = string.format("%x%04x", os.time(), math.random(0, 0xffff))
   mode = os.getenv("FLOOD_MODE") or "v6"
   nets = tonumber(os.getenv("FLOOD_NETS") or "200")
   nthreads = tonumber(os.getenv("FLOOD_THREADS") or "2")
   lists = split(os.getenv("FLOOD_LISTS") or "news")
   repeat_every = tonumber(os.getenv("REPEAT_EVERY") or "4")
   repeat_victims = tonumber(os.getenv("REPEAT_VICTIMS") or "3")
   n = 0
   r = 0
   s303 = 0
   s303_send = 0
   s429 = 0
   other = 0
   wrk.method = "POST"
   wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
end

local function client(g)
   if mode == "v4" then
      local k = g % nets
      local host = math.floor(g / nets) % 254 + 1
      return string.format("10.%d.%d.%d", 100 + math.floor(k / 256), k % 256, host)
   end
   return string.format("2001:db8:1:%x::1", g % 65536)
end

function request()
   n = n + 1
   local g = n * nthreads + (tid - 1)
   local email, list
   if repeat_every > 0 and math.random(repeat_every) == 1 then
      r = r + 1
      email = "repeat-" .. (r % repeat_victims) .. "%40example.net"
      list = lists[math.floor(r / repeat_victims) % #lists + 1]
   else
      email = "victim-" .. run .. "-t" .. tid .. "-" .. n .. "%40example.net"
      list = lists[n % #lists + 1]
   end
   wrk.headers["CF-Connecting-IP"] = client(g)
   return wrk.format(nil, nil, nil, "email=" .. email .. "&consent=yes&list=" .. list)
end

function response(status, headers, body)
   if status == 303 then
      s303 = s303 + 1
      local location = headers["location"] or headers["Location"] or ""
      if string.find(location, "send=", 1, true) then
         s303_send = s303_send + 1
      end
   elseif status == 429 then
      s429 = s429 + 1
   else
      other = other + 1
   end
end

function done(summary, latency, requests)
   local a, b, c, d = 0, 0, 0, 0
   for _, thread in ipairs(threads) do
      a = a + thread:get("s303")
      d = d + thread:get("s303_send")
      b = b + thread:get("s429")
      c = c + thread:get("other")
   end
   io.write(string.format("FLOOD requests=%d duration_us=%d rps=%.1f s303=%d s303_send=%d s429=%d other=%d socket_errors=%d p50_us=%d p99_us=%d\n",
      summary.requests, summary.duration, summary.requests / (summary.duration / 1e6), a, d, b, c,
      summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
      latency:percentile(50), latency:percentile(99)))
end
