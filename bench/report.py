#!/usr/bin/env python3
"""Statistics, verdicts and the Markdown report of bench/run.sh (Python 3 standard library only).

run.sh only orchestrates: it starts the servers, runs the load, stops them, and writes raw figures
into one directory (RAW below), which this script reads and nothing else:

  facts.tsv  KEY<TAB>VALUE, one a line; a key may repeat (startup_us, exit_on_term): run.sh's
             knobs, the machine, versions, memory (KiB), timings (µs), peers and why one was skipped
  runs.tsv   one line per measured wrk run (columns in RUN_COLUMNS): the target, the round, wrk's
             output file, the run's length, clock ticks per second, and the CPU clock ticks used so
             far by the machine, the server, the upstream and wrk (run.sh's reaped children),
             taken just before and just after the run
  wrk-*.txt  wrk's own output; cold-metrics.txt, download.sha, upload.json: as their names say

Usage:
  report.py line RAW          progress line of the last run in runs.tsv (exit 1: wrk's output
                              cannot be read)
  report.py report RAW OUT    writes the Markdown report to OUT; prints why run.sh must fail
                              (invalid measurements, or BENCH_STRICT=1 and a missed target), or
                              nothing

Since the raw directory is all it reads, `BENCH_KEEP_TMP=1 bash bench/run.sh` followed by
`python3 bench/report.py report <tmp>/raw out.md` remakes a report.
"""

import json
import os
import re
import sys
import time

RUN_COLUMNS = (
    "target round wrk_file seconds clk_tck "
    "machine0 server0 upstream0 wrk0 machine1 server1 upstream1 wrk1"
).split()

# Labels of the targets in the tables; run.sh's names for them are the keys.
LABELS = {
    "nginx-direct": "nginx direct (one-hop ceiling)",
    "nginx-proxy": "nginx as reverse proxy",
    "bearer-proxy": "**bearer-proxy**",
}
PEERS = {  # name -> (label, how it runs)
    "haproxy": ("HAProxy", "`nbthread 1`, `http-reuse always`"),
    "caddy": ("Caddy", "`GOMAXPROCS=1`, `reverse_proxy` in `handle_path /bench/*`"),
    "go-httputil": ("Go `net/http/httputil.ReverseProxy`", "`GOMAXPROCS=1`, `bench/go_httputil_proxy.go`"),
}
FLOOR = {  # name -> (label, what it is); bench-floor-proxy, bench/floor (issue #15 items 3-4)
    "floor-nio": ("floor: NIOHTTP1 codecs both sides", "`bench-floor-proxy --codec nio`: the floor of bearer-proxy's "
                  "design, a pass-through on the codecs bearer-proxy uses"),
    "floor-strict": ("prototype: strict byte parser", "`bench-floor-proxy --codec strict`: heads read by "
                     "`BearerCodec` and written on without `HTTPHeaders`, bodies passed through as bytes"),
}
BUSY_OTHER_LOAD = 10  # % of one core used by the rest of the machine that makes a run noisy


def median(values):
    """The median of the numbers in values, None left out; None when none is left."""
    xs = sorted(v for v in values if v is not None)
    if not xs:
        return None
    mid = len(xs) // 2
    return xs[mid] if len(xs) % 2 else (xs[mid - 1] + xs[mid]) / 2


# --- raw figures --------------------------------------------------------------------------------


class Facts:
    """facts.tsv: every value of a key in the order written."""

    def __init__(self, path):
        self.values = {}
        with open(path, encoding="utf-8") as f:
            for line in f:
                key, _, value = line.rstrip("\n").partition("\t")
                self.values.setdefault(key, []).append(value)

    def get(self, key, default=""):
        return self.values.get(key, [default])[-1]

    def all(self, key):
        return self.values.get(key, [])

    def int(self, key, default=0):
        value = self.get(key)
        return int(value) if re.fullmatch(r"-?[0-9]+", value) else default


def to_ms(text):
    """wrk's latency ("812.00us", "1.23ms", "2.00s") in milliseconds; None if it is none of those."""
    match = re.fullmatch(r"([0-9.]+)([a-z]+)", text)
    scale = {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 6e4, "h": 3.6e6}
    if not match or match.group(2) not in scale:
        return None
    return float(match.group(1)) * scale[match.group(2)]


def parse_wrk(text):
    """What run.sh needs of wrk's output: rps, p50_ms, p99_ms, requests, non2xx, socket_errors.
    A figure wrk did not print is None (the error counts: 0, since wrk prints them only when
    there are some)."""
    out = {"rps": None, "p50_ms": None, "p99_ms": None, "requests": None, "non2xx": 0, "socket_errors": 0}
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 2 and f[0] == "50%":
            out["p50_ms"] = to_ms(f[1])
        elif len(f) >= 2 and f[0] == "99%":
            out["p99_ms"] = to_ms(f[1])
        elif len(f) >= 2 and f[0] == "Requests/sec:":
            out["rps"] = float(f[1])
        elif len(f) >= 3 and f[1] == "requests" and f[2] == "in":
            out["requests"] = int(f[0])
        elif "Non-2xx or 3xx responses:" in line:
            out["non2xx"] = int(f[-1])
        elif "Socket errors:" in line:  # "Socket errors: connect 0, read 0, write 0, timeout 0"
            out["socket_errors"] = sum(int(n) for n in re.findall(r"[0-9]+", line))
    return out


class Run:
    """One measured wrk run: wrk's figures plus the server's CPU per request and the other load."""

    def __init__(self, raw, fields):
        row = dict(zip(RUN_COLUMNS, fields))
        self.target, self.round = row["target"], row["round"]
        self.wrk_path = os.path.join(raw, row["wrk_file"])
        with open(self.wrk_path, encoding="utf-8", errors="replace") as f:
            wrk = parse_wrk(f.read())
        self.valid = None not in (wrk["rps"], wrk["p50_ms"], wrk["p99_ms"], wrk["requests"])
        self.rps, self.p50, self.p99 = wrk["rps"], wrk["p50_ms"], wrk["p99_ms"]
        self.requests, self.non2xx, self.socket_errors = wrk["requests"], wrk["non2xx"], wrk["socket_errors"]
        hz, seconds = int(row["clk_tck"]), int(row["seconds"])
        ticks = {k: int(row[k + "1"]) - int(row[k + "0"]) for k in ("machine", "server", "upstream", "wrk")}
        self.cpu = round(ticks["server"] * 1e6 / hz / self.requests, 2) if self.requests else None
        other = (ticks["machine"] - ticks["server"] - ticks["upstream"] - ticks["wrk"]) * 100 / (hz * seconds)
        self.other = int("%.0f" % max(other, 0))

    @property
    def errors(self):
        return self.non2xx + self.socket_errors


def read_runs(raw):
    with open(os.path.join(raw, "runs.tsv"), encoding="utf-8") as f:
        return [Run(raw, line.rstrip("\n").split("\t")) for line in f if line.strip()]


# --- formatting ---------------------------------------------------------------------------------


def fmt(value, spec):
    return "n/a" if value is None else spec % value


def ratio(a, b):
    return a / b if a is not None and b else None


def mib(kib):
    """KiB (a string, maybe empty) -> "12.3" MiB, or "n/a"."""
    return "n/a" if not kib else "%.1f" % (int(kib) / 1024)


class Target:
    """A target's medians over its rounds."""

    def __init__(self, runs, name):
        mine = [r for r in runs if r.target == name]
        self.name = name
        self.rps = median(r.rps for r in mine)
        self.p50 = median(r.p50 for r in mine)
        self.p99 = median(r.p99 for r in mine)
        self.cpu = median(r.cpu for r in mine)
        self.errors = sum(r.errors for r in mine)

    def row(self, label):
        return "| %s | %s | %s | %s | %s | %d |" % (
            label, fmt(self.rps, "%.0f"), fmt(self.p50, "%.3f"), fmt(self.p99, "%.3f"), fmt(self.cpu, "%.1f"), self.errors)


def progress_line(run):
    return "%-28s round %-2s %8.0f req/s  p50 %6.3f ms  p99 %7.3f ms  CPU %6s us/req  errors %s  other load %s%%" % (
        run.target, run.round, run.rps, run.p50, run.p99, fmt(run.cpu, "%.2f"), run.errors, run.other)


def joined(names):
    """["a", "b", "c"] -> "a, b and c"."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


# --- the report ---------------------------------------------------------------------------------


def cold_section(raw, facts):
    """The cold-cache paragraph and the token requests counted after the burst (None: not found)."""
    with open(os.path.join(raw, "wrk-cold.txt"), encoding="utf-8", errors="replace") as f:
        wrk = parse_wrk(f.read())
    text = "wrk exit %s: %s requests in 1 s over %s connections, non-2xx %d, socket errors %d." % (
        facts.get("cold_rc"), "?" if wrk["requests"] is None else wrk["requests"], facts.get("cold_connections"),
        wrk["non2xx"], wrk["socket_errors"])
    metrics = []
    path = os.path.join(raw, "cold-metrics.txt")
    if os.path.exists(path):
        with open(path, encoding="utf-8", errors="replace") as f:
            token_line = re.compile(r"^[a-z_:]*token[a-z_:]*(\{|\s)", re.IGNORECASE)
            metrics = [line.rstrip("\n") for line in f if token_line.match(line) and "_bucket" not in line][:20]
    # One scope set in the config: every outcome of bearer_proxy_token_requests_total adds up to 1.
    counted = [float(m.split()[-1]) for m in metrics if re.match(r"bearer_proxy_token_requests_total[{ ]", m)]
    token_requests = None
    if counted:
        total = sum(counted)
        token_requests = "%d" % total if total == int(total) else "%g" % total
    if metrics:
        text += "\n\nToken metrics from `/-/metrics` afterwards:\n\n```\n" + "\n".join(metrics) + "\n```"
    else:
        text += " No token metrics found in /-/metrics: check the token-acquisition log lines by hand."
    return text, token_requests


def big_section(raw, facts, problems):
    """The large-bodies table, and the two checks for the targets table."""
    size, big_sha = facts.get("big_mb"), facts.get("big_sha")
    with open(os.path.join(raw, "download.sha"), encoding="utf-8") as f:
        dl_sha = (f.read().split() or [""])[0]
    dl_ok = "sha256 matches"
    if dl_sha != big_sha:
        dl_ok = "sha256 MISMATCH"
        problems.append("download: sha256 %s, expected %s" % (dl_sha, big_sha))
    try:
        with open(os.path.join(raw, "upload.json"), encoding="utf-8") as f:
            sink = json.load(f)
    except (OSError, ValueError):
        sink = {}
    ul_sha, ul_bytes = sink.get("sha256") or "?", sink.get("bytes", "?")
    ul_ok = "sha256 matches"
    if ul_sha != big_sha:
        ul_ok = "sha256 MISMATCH (sink got %s bytes)" % ul_bytes
        problems.append("upload: the sink received sha256 %s (%s bytes), expected %s" % (ul_sha, ul_bytes, big_sha))
    lines = ["| direction | size | time | throughput | check | bearer-proxy peak RSS (VmHWM) |", "|---|---|---|---|---|---|"]
    for label, key, ok in (("download (nginx file → curl)", "dl", dl_ok), ("upload (curl -T → Python sink)", "ul", ul_ok)):
        secs = float("%.2f" % (facts.int(key + "_us") / 1e6))
        lines.append("| %s | %s MiB | %.2f s | %.0f MiB/s | %s | %s MiB |" % (
            label, size, secs, int(size) / secs if secs > 0 else 0, ok, mib(facts.get(key + "_hwm"))))
    lines.append("\nsha256 of the file: `%s`. Download throughput includes `sha256sum` in the pipe." % big_sha)
    checks = [(dl_ok, facts.get("dl_hwm")), (ul_ok, facts.get("ul_hwm"))]
    return "\n".join(lines), checks


def peers_section(facts, runs, nginx):
    """The peers table: each proxy doing nginx-proxy's job, against nginx-proxy's medians."""
    out = ["## Peers: other proxies doing the same job\n"]
    out.append(
        "Each listens on 127.0.0.1, forwards `/bench/*` to the same nginx upstream with the prefix stripped, sets "
        "`Authorization: Bearer <the static dummy token nginx-proxy sends>`, runs one worker and keeps no access "
        "log; each takes its turn in every round. The ratios divide each one's median by nginx-proxy's "
        "(req/s: higher is better; CPU µs/req: lower is better).\n")
    out.append("| proxy | req/s | p50 ms | p99 ms | CPU µs/req | req/s ÷ nginx | CPU ÷ nginx | errors |")
    out.append("|---|---|---|---|---|---|---|---|")
    args = facts.get("proxy_args")
    rows = [("nginx-proxy", "nginx as reverse proxy", "1 worker, upstream `keepalive 64`"),
            ("bearer-proxy", "**bearer-proxy**", "`serve %s`" % args if args else "`serve` with its defaults")]
    for name in facts.all("peer"):
        label, setup = PEERS[name]
        version = facts.get("version:" + name)
        rows.append((name, label + (" %s" % version if version else ""), setup))
    for name, label, _ in rows:
        t = Target(runs, name)
        out.append("| %s | %s | %s | %s | %s | %s | %s | %d |" % (
            label, fmt(t.rps, "%.0f"), fmt(t.p50, "%.3f"), fmt(t.p99, "%.3f"), fmt(t.cpu, "%.1f"),
            fmt(ratio(t.rps, nginx.rps), "%.3f"), fmt(ratio(t.cpu, nginx.cpu), "%.3f"), t.errors))
    out.append("\nHow each runs: " + "; ".join("%s: %s" % (label.strip("*"), setup) for _, label, setup in rows) + ".")
    lens = ", ".join("%s via %s" % (facts.get("auth_len:" + n), n) for n in facts.all("peer"))
    if lens:
        out.append("\nChecked once before the load (`/auth-echo`): the upstream received nginx-proxy's `Authorization` "
                   "header byte for byte through each peer (chars: %s via nginx, %s)." % (facts.get("ngx_auth_len"), lens))
    skipped = facts.all("peer_skipped")
    if skipped:
        out.append("\nSkipped:\n")
        out.extend("- " + s for s in skipped)
    return "\n".join(out) + "\n\n"


def ratio_row(label, t, nginx, bp):
    """A table row of t's medians with its req/s and CPU a request against nginx-proxy's, and its CPU against bp's."""
    return "| %s | %s | %s | %s | %s | %s | %s | %s | %d |" % (
        label, fmt(t.rps, "%.0f"), fmt(t.p50, "%.3f"), fmt(t.p99, "%.3f"), fmt(t.cpu, "%.1f"),
        fmt(ratio(t.rps, nginx.rps), "%.3f"), fmt(ratio(t.cpu, nginx.cpu), "%.3f"), fmt(ratio(t.cpu, bp.cpu), "%.3f"),
        t.errors)


def floor_section(facts, runs, nginx, bp):
    """The floor of the current design and the prototype of the next, against nginx-proxy and bearer-proxy."""
    out = ["## Floor and prototype (bench-floor-proxy, one event loop)\n"]
    out.append(
        "Each does bearer-proxy's job with nothing else: one upstream connection kept alive per client connection, "
        "`/bench` stripped, `Host` set to the upstream, `Authorization: Bearer <nginx-proxy's static token>` put in, "
        "the response streamed back; `--threads 1`. The ratios divide each one's median by nginx-proxy's, and by "
        "bearer-proxy's (req/s: higher is better; CPU µs/req: lower is better).\n")
    skipped = facts.get("floor_skipped")
    if skipped:
        out.append("Not measured: %s.\n" % skipped)
        return "\n".join(out) + "\n"
    out.append("| target | req/s | p50 ms | p99 ms | CPU µs/req | req/s ÷ nginx | CPU ÷ nginx | CPU ÷ bearer-proxy | errors |")
    out.append("|---|---|---|---|---|---|---|---|---|")
    rows = [("nginx-proxy", "nginx as reverse proxy"), ("bearer-proxy", "**bearer-proxy**")]
    rows += [(name, FLOOR[name][0]) for name in facts.all("floor_target")]
    out.extend(ratio_row(label, Target(runs, name), nginx, bp) for name, label in rows)
    out.append("")
    out.extend("- %s: %s." % FLOOR[name] for name in facts.all("floor_target"))
    lens = ", ".join("%s via %s" % (facts.get("auth_len:" + n), n) for n in facts.all("floor_target"))
    out.append("\nChecked once before the load (`/auth-echo`): the upstream received nginx-proxy's `Authorization` "
               "header byte for byte (chars: %s)." % lens)
    return "\n".join(out) + "\n\n"


TLS_ROWS = (  # name -> (upstream, label); the first of each upstream is the reference its ratios divide by
    ("nginx-proxy-tls", "kept alive", "nginx as reverse proxy"),
    ("bearer-proxy-tls", "kept alive", "**bearer-proxy**"),
    ("nginx-proxy-tlsclose", "closes after each answer", "nginx as reverse proxy (`proxy_ssl_session_reuse on`)"),
    ("nginx-proxy-tlsclose-noreuse", "closes after each answer", "nginx as reverse proxy (`proxy_ssl_session_reuse off`)"),
    ("bearer-proxy-tlsclose", "closes after each answer", "**bearer-proxy**"),
)


def tls_section(runs):
    """Both proxies against https upstreams: kept alive, and closing after each answer (a handshake a request)."""
    out = ["## HTTPS upstreams\n"]
    out.append(
        "nginx upstreams with the test CA's certificate (`Tests/BearerProxyTests/Fixtures/tls`), TLS 1.2–1.3, "
        "session tickets and a session cache on; both proxies verify the certificate and its name. One upstream "
        "keeps its connections; the other closes after each answer (`keepalive_timeout 0`), so every request costs "
        "the proxy a TCP connection and a TLS handshake: nginx resumes the session by default, bearer-proxy cannot "
        "(swift-nio-ssl has no client session API; docs/operations.md). The ratios divide by nginx's row for the "
        "same upstream with its defaults.\n")
    out.append("| upstream | target | req/s | p50 ms | p99 ms | CPU µs/req | req/s ÷ nginx | CPU ÷ nginx | p99 ÷ nginx | errors |")
    out.append("|---|---|---|---|---|---|---|---|---|---|")
    reference = {}
    for name, upstream, label in TLS_ROWS:
        t = Target(runs, name)
        ref = reference.setdefault(upstream, t)
        out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %d |" % (
            upstream, label, fmt(t.rps, "%.0f"), fmt(t.p50, "%.3f"), fmt(t.p99, "%.3f"), fmt(t.cpu, "%.1f"),
            fmt(ratio(t.rps, ref.rps), "%.3f"), fmt(ratio(t.cpu, ref.cpu), "%.3f"), fmt(ratio(t.p99, ref.p99), "%.3f"),
            t.errors))
    closing, noreuse = Target(runs, "bearer-proxy-tlsclose"), Target(runs, "nginx-proxy-tlsclose-noreuse")
    out.append("\nbearer-proxy's CPU a request against nginx's without session reuse, closing upstream: **%s**." %
               fmt(ratio(closing.cpu, noreuse.cpu), "%.3f"))
    return "\n".join(out) + "\n\n"


def dpop_section(facts, runs, nginx, bp):
    """A DPoP route (a proof signed per request) against the bearer route and nginx-proxy."""
    out = ["## A DPoP route\n"]
    out.append(
        "A second bearer-proxy (same arguments) whose client-credentials account gets DPoP-bound tokens from "
        "`bench/dpop_issuer.py`: each request carries `Authorization: DPoP` and a fresh ES256 proof (RFC 9449 §7). "
        "The upstream received a `DPoP` Authorization header of %s chars and a proof beside it.\n" % facts.get("dpop_auth_len"))
    out.append("| target | req/s | p50 ms | p99 ms | CPU µs/req | req/s ÷ nginx | CPU ÷ nginx | CPU ÷ bearer route | errors |")
    out.append("|---|---|---|---|---|---|---|---|---|")
    for name, label in (("nginx-proxy", "nginx as reverse proxy (static bearer token)"),
                        ("bearer-proxy", "**bearer-proxy**, bearer route"),
                        ("bearer-proxy-dpop", "**bearer-proxy**, DPoP route")):
        out.append(ratio_row(label, Target(runs, name), nginx, bp))
    return "\n".join(out) + "\n\n"


def machine_section(facts):
    targets = facts.get("round_targets").split()
    return "".join([
        "## Machine\n\n",
        "- CPUs: %s (`nproc`), %s\n" % (facts.get("nproc"), facts.get("cpu_model") or "unknown model"),
        "- Memory: %s; kernel: %s\n" % (facts.get("mem_total"), facts.get("kernel")),
        "- Load average before the run: %s\n" % facts.get("loadavg"),
        "- %s; %s; %s\n" % (facts.get("nginx_version"), facts.get("wrk_version") or "wrk (unknown version)",
                            facts.get("curl_version")),
        "- Swift: %s\n" % (facts.get("swift_version") or "n/a"),
        "- bearer-proxy: `%s`, commit %s; its log (stdout+stderr, to a file): %s lines, %s KiB\n" % (
            facts.get("bp_command"), facts.get("git_rev"), facts.get("bp_log_lines"), facts.int("bp_log_bytes") // 1024),
        "- bearer-proxy's build: %s; %s\n" % (facts.get("bp_build") or "unknown", facts.get("bp_linkage") or "?"),
        "- nginx-proxy: `worker_processes %s`; the upstream nginx: 1 worker\n" % (facts.get("nginx_workers") or "1"),
        "- Load: `wrk -t%s -c%s -d%ss --latency`, %s s warm-up before each run, %s rounds alternating %s; "
        "each column is the median over the rounds (nginx direct: one run)\n" % (
            facts.get("threads"), facts.get("connections"), facts.get("seconds"), facts.get("warmup"),
            facts.get("rounds"), joined(targets)),
        "- Authorization header the upstream received: %s chars via nginx (static dummy token), "
        "%s chars via bearer-proxy (dev-flow token)\n\n" % (facts.get("ngx_auth_len"), facts.get("bp_auth_len")),
    ])


def small_responses_section(facts, runs, direct, nginx, bp):
    w = ['## Small responses (`{"ok":true}`), %s connections\n\n' % facts.get("connections"),
         "| target | req/s | p50 ms | p99 ms | CPU µs/req | errors |\n|---|---|---|---|---|---|\n"]
    w.extend(t.row(LABELS[t.name]) + "\n" for t in (direct, nginx, bp))
    w.append("\nbearer-proxy / nginx-proxy: req/s **%s** (target ≥ 1.00), p99 **%s** (target ≤ 1.00). " % (
        fmt(ratio(bp.rps, nginx.rps), "%.3f"), fmt(ratio(bp.p99, nginx.p99), "%.3f")))
    added = [None if t.p99 is None or direct.p99 is None else t.p99 - direct.p99 for t in (nginx, bp)]
    w.append("Added p99 over direct: nginx-proxy %s ms, bearer-proxy %s ms.\n\n" % tuple(fmt(a, "%.3f") for a in added))
    w.append("CPU µs/req is the server's own user+system time (`/proc/PID/stat`, the process and its workers) over the "
             "measured run divided by the requests wrk completed; errors are non-2xx responses plus socket errors "
             "summed over the rounds.\n\n")
    max_other = max((r.other for r in runs), default=0)
    if max_other > BUSY_OTHER_LOAD:
        w.append("**Warning: the machine was busy.** Other processes used up to %d%% of a core during a measured run "
                 "(see \"other load\" below); these numbers understate both proxies and are noisy. Rerun on an idle "
                 "machine.\n\n" % max_other)
    w.append('<details><summary>Every run</summary>\n\n"Other load" is the CPU the rest of the machine used during the '
             "run (`/proc/stat` minus wrk, the upstream and the measured server), in % of one core.\n\n")
    w.append("| target | round | req/s | p50 ms | p99 ms | CPU µs/req | non-2xx | socket errors | other load |\n"
             "|---|---|---|---|---|---|---|---|---|\n")
    for r in runs:
        w.append("| %s | %s | %.0f | %.3f | %.3f | %s | %d | %d | %d%% |\n" % (
            r.target, r.round, r.rps, r.p50, r.p99, fmt(r.cpu, "%.2f"), r.non2xx, r.socket_errors, r.other))
    w.append("\n</details>\n\n")
    return "".join(w)


def memory_section(facts, startup_ms, startup_median):
    first = "the cold-cache burst" if facts.get("cold") == "1" else "one proxied request"
    return "".join([
        "## bearer-proxy memory and start-up\n\n| measure | value |\n|---|---|\n",
        "| RSS idle after first start-up and %s | %s MiB |\n" % (first, mib(facts.get("rss_idle_start"))),
        "| RSS right after the load | %s MiB |\n" % mib(facts.get("rss_after_load")),
        "| peak RSS (VmHWM) after the load | %s MiB |\n" % mib(facts.get("hwm_after_load")),
        "| RSS idle after restart with a cached token (after its first proxied response) | %s MiB |\n" %
        mib(facts.get("rss_idle_restarted")),
        "| start-up to first proxied response, cached token (median of %s) | %s ms (runs: %s) |\n" % (
            facts.get("startup_runs"), fmt(startup_median, "%.1f"), " ".join(startup_ms)),
        "| exit status after each SIGTERM | %s |\n\n" % " ".join(facts.all("exit_on_term")),
    ])


def targets_section(facts, nginx, bp, startup_median, big_checks, token_requests):
    """SPEC section 11's table, and how many targets were missed."""
    w = ["## SPEC section 11 targets\n\n| target | measured | verdict |\n|---|---|---|\n"]
    missed = 0

    def row(label, measured, ok):
        nonlocal missed
        missed += not ok
        w.append("| %s | %s | %s |\n" % (label, measured, "PASS" if ok else "FAIL"))

    # Verdicts on the printed (rounded) figures, so that the table never contradicts itself.
    rps_ratio, p99_ratio = fmt(ratio(bp.rps, nginx.rps), "%.3f"), fmt(ratio(bp.p99, nginx.p99), "%.3f")
    row("req/s at least nginx's", "ratio %s" % rps_ratio, rps_ratio != "n/a" and float(rps_ratio) >= 1)
    row("p99 no worse than nginx's", "ratio %s" % p99_ratio, p99_ratio != "n/a" and float(p99_ratio) <= 1)
    idle = mib(facts.get("rss_idle_restarted"))
    row("idle RSS < 30 MiB", "%s MiB after restart" % idle, idle != "n/a" and float(idle) < 30)
    startup = fmt(startup_median, "%.1f")
    row("start-up to first proxied response < 200 ms", "%s ms" % startup, startup != "n/a" and float(startup) < 200)
    if big_checks:
        for direction, (ok_text, hwm) in zip(("download", "upload"), big_checks):
            peak = mib(hwm)
            row("%s MiB %s, peak RSS < 64 MiB" % (facts.get("big_mb"), direction),
                "%s MiB, %s" % (peak, ok_text), peak != "n/a" and float(peak) < 64)
    else:
        w.append("| 1 GiB up and down, peak RSS < 64 MiB | not run (BENCH_BIG=1) | n/a |\n")
    if facts.get("cold") == "1":
        conns = facts.get("cold_connections")
        if token_requests is not None:
            row("%s concurrent requests, cold cache → 1 token request per scope set (1 here)" % conns,
                "%s token request(s)" % token_requests, float(token_requests) == 1)
        else:
            w.append("| %s concurrent requests, cold cache → 1 token request per scope set | no token counter in "
                     "/-/metrics | check by hand |\n" % conns)
    return "".join(w), missed


def h2_section(raw, facts):
    """bench/h2.sh's medians (BENCH_H2=1): HTTP/2 clients, against nginx's http2 listener and the HTTP/2 floor."""
    w = ["## HTTP/2 (bench/h2.sh)\n\n"]
    if facts.get("h2_skipped"):
        w.append("Not measured: %s.\n\n" % facts.get("h2_skipped"))
        return "".join(w)
    medians = {}
    # (name, mode) -> {"nginx": r, "floor-connection": r, "bearer-proxy h1": r}: medians of the ratios h2.sh pairs
    # within each round, the figures that survive the machine's drift between runs.
    paired = {}
    try:
        with open(os.path.join(raw, "h2.txt"), encoding="utf-8") as f:
            text = f.read().split("medians:\n", 1)[1]
    except (OSError, IndexError):
        w.append("bench/h2.sh printed no medians (BENCH_KEEP_TMP=1 keeps its output, h2.txt).\n\n")
        return "".join(w)
    own, _, ratios = text.partition("medians of the paired ratios")
    for line in own.splitlines():
        fields = line.split()
        if len(fields) >= 5:
            medians[(fields[0], fields[1])] = (float(fields[2]), float(fields[4]))
    for line in ratios.splitlines()[1:]:
        fields = line.split()
        if len(fields) >= 2:
            found = re.findall(r"([0-9.]+) × (nginx|floor-connection|bearer-proxy h1)", line)
            paired[(fields[0], fields[1])] = {label: float(ratio) for ratio, label in found}
    w.append("h2load, %s requests a run, %s rounds, medians; one loop for bearer-proxy and the floor, one worker for "
             "nginx. `h2`: 50 connections, one stream at a time on each; `h2x100`: one connection, 100 streams; "
             "`h2h2`, `h2h2x100`: the same to an HTTP/2 upstream (nginx: `grpc_pass`); `h1`: HTTP/1.1 by the same "
             "tool. The floor (bench-floor-proxy `--http2 channels|connection`) does nothing but the job on "
             "NIOHTTP2: a child channel a stream, or every stream on the connection's handler.\n\n"
             % (facts.get("h2_requests"), facts.get("h2_rounds")))
    w.append("| load | proxy | req/s | CPU a request | CPU × nginx's |\n|---|---|---|---|---|\n")
    for mode in ("h1", "h2", "h2x100", "h2h2", "h2h2x100"):
        reference = medians.get(("nginx", mode))
        for name in ("bearer-proxy", "floor-channels", "floor-connection", "nginx"):
            if (name, mode) not in medians:
                continue
            rps, cpu = medians[(name, mode)]
            times = "%.2f" % (cpu / reference[1]) if reference and reference[1] else "n/a"
            w.append("| %s | %s | %.0f | %.1f µs | %s |\n" % (mode, name, rps, cpu, times))
    w.append("\n")
    bp_h1, bp_h2, bp_x100 = (medians.get(("bearer-proxy", m)) for m in ("h1", "h2", "h2x100"))
    ng_h2 = medians.get(("nginx", "h2"))

    def ratio(name, mode, against, fallback):
        """The median of the paired ratios when h2.sh printed it, else the ratio of the medians."""
        return paired.get((name, mode), {}).get(against, fallback)

    if paired:
        w.append("Paired: each figure over its reference in the same round, the median over the rounds.\n\n")
    for mode in ("h2", "h2x100"):
        bp, ng = medians.get(("bearer-proxy", mode)), medians.get(("nginx", mode))
        if bp and ng:
            r = ratio("bearer-proxy", mode, "nginx", bp[1] / ng[1])
            w.append("- `%s`: HTTP/2 CPU a request ≤ 1.3 × nginx's (the issue's goal, out of reach of any proxy on "
                     "swift-nio-http2: docs/benchmarks.md): %.2f × — %s\n" % (mode, r, "met" if r <= 1.3 else "not met"))
        floor = medians.get(("floor-connection", mode))
        if bp and floor:
            r = ratio("bearer-proxy", mode, "floor-connection", bp[1] / floor[1])
            w.append("- `%s`: CPU a request ≤ 1.5 × the `connection` floor's (the goal this project holds HTTP/2 to): "
                     "%.2f × — %s\n" % (mode, r, "met" if r <= 1.5 else "not met"))
    if bp_h2 and ng_h2:
        ok = bp_h2[0] >= ng_h2[0]
        w.append("- SPEC §11, HTTP/2 req/s at least nginx's (h2load, one stream a connection): %.2f × — %s\n"
                 % (bp_h2[0] / ng_h2[0], "met" if ok else "not met"))
    if bp_x100 and bp_h1:
        r = ratio("bearer-proxy", "h2x100", "bearer-proxy h1", bp_x100[1] / bp_h1[1])
        w.append("- 100 streams on one connection, CPU a request ≤ the proxy's own HTTP/1.1: %.2f × — %s\n"
                 % (r, "met" if r <= 1.0 else "not met"))
    w.append("\n")
    return "".join(w)


def report(raw, out_path):
    """Writes the report; returns why run.sh must fail, or None."""
    facts = Facts(os.path.join(raw, "facts.tsv"))
    runs = read_runs(raw)
    problems = ["%s round %s: %d non-2xx responses, %d socket errors" % (r.target, r.round, r.non2xx, r.socket_errors)
                for r in runs if r.errors]
    direct, nginx, bp = (Target(runs, n) for n in ("nginx-direct", "nginx-proxy", "bearer-proxy"))
    startup_ms = ["%.1f" % (int(us) / 1000) for us in facts.all("startup_us")]
    startup_median = median(float(ms) for ms in startup_ms)

    w = ["# bearer-proxy benchmark, %s\n\n" % time.strftime("%Y-%m-%d %H:%M %Z"), machine_section(facts),
         small_responses_section(facts, runs, direct, nginx, bp)]
    if facts.get("floor") == "1":
        w.append(floor_section(facts, runs, nginx, bp))
    if facts.get("peers") == "1":
        w.append(peers_section(facts, runs, nginx))
    if facts.get("tls") == "1":
        w.append(tls_section(runs))
    if facts.get("dpop") == "1":
        w.append(dpop_section(facts, runs, nginx, bp))
    if facts.get("h2") == "1":
        w.append(h2_section(raw, facts))
    w.append(memory_section(facts, startup_ms, startup_median))
    token_requests, big_checks = None, None
    if facts.get("cold") == "1":
        cold_text, token_requests = cold_section(raw, facts)
        w.append("## Cold cache\n\n%s\n\n" % cold_text)
    if facts.get("big") == "1":
        big_text, big_checks = big_section(raw, facts, problems)
        w.append("## Large bodies (BENCH_BIG=1)\n\n%s\n\n" % big_text)
    targets, missed = targets_section(facts, nginx, bp, startup_median, big_checks, token_requests)
    w.append(targets)
    if problems:
        w.append("\n**Invalid measurements:**\n\n")
        w.extend("- %s\n" % p for p in problems)
    with open(out_path, "w", encoding="utf-8") as f:
        f.write("".join(w))

    if problems:
        return "some measurements are invalid: " + " ".join(problems)
    if facts.get("strict") == "1" and missed:
        return "%d SPEC target(s) missed (BENCH_STRICT=1)" % missed
    return None


def main(argv):
    if len(argv) == 3 and argv[1] == "line":
        try:
            with open(os.path.join(argv[2], "runs.tsv"), encoding="utf-8") as f:
                run = Run(argv[2], f.read().splitlines()[-1].split("\t"))
        except (OSError, IndexError, KeyError, ValueError) as error:
            print("no run to show: %s" % error, file=sys.stderr)
            return 1
        if not run.valid:
            print("could not parse wrk output %s" % run.wrk_path, file=sys.stderr)
            return 1
        print(progress_line(run))
        return 0
    if len(argv) == 4 and argv[1] == "report":
        why = report(argv[2], argv[3])
        if why:
            print(why)
        return 0
    print("usage: report.py line RAW | report.py report RAW OUT", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
