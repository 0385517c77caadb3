#!/usr/bin/env python3
"""tools/bundle: the tarball unpacked in a fresh folder starts the server, bench (which starts the
bundle's server itself, and its allocator jobs with the bundle's allocators) and the peers through the
bundled loader and libraries, with an empty LD_LIBRARY_PATH; the libraries the server maps come from
the bundle, not from the system.

usage: bundle_test.py TOOLS_BUNDLE BUILD_DIR WORK_DIR
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tarfile
import time


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def main():
    bundle_tool, build_dir, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    tarball = os.path.join(work, "ringlab-bundle.tar.gz")
    env = dict(os.environ, BUILD_DIR=build_dir, OUT=tarball)
    made = subprocess.run([bundle_tool], env=env, capture_output=True, text=True, timeout=1800)
    if made.returncode != 0:
        fail("tools/bundle exited %d: %s" % (made.returncode, made.stderr[-2000:]))
    unpacked = os.path.join(work, "elsewhere")
    with tarfile.open(tarball) as archive:
        archive.extractall(unpacked)
    run = os.path.join(unpacked, "ringlab", "run")
    lib = os.path.join(unpacked, "ringlab", "lib")
    clean = dict(os.environ, LD_LIBRARY_PATH="")

    # The server: its libraries are the bundle's.
    server = subprocess.Popen([run, "server", "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env=clean)
    try:
        line = server.stdout.readline().strip()
        if not line.startswith("listening on "):
            fail("the bundle's server printed %r, stderr %r" % (line, server.stderr.read()[-2000:]))
        port = int(line.rsplit(":", 1)[1])
        with open("/proc/%d/maps" % server.pid) as maps:
            mapped = {row.split()[-1] for row in maps if "/" in row}
        for name in ("libc.so.6", "liburing.so.2", "ld-linux-x86-64.so.2"):
            paths = [p for p in mapped if os.path.basename(p) == name]
            if not paths or any(not p.startswith(lib + "/") for p in paths):
                fail("%s is mapped from %s, not from the bundle's %s" % (name, paths, lib))
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            answer = b""
            while True:
                chunk = s.recv(4096)
                if not chunk:
                    break
                answer += chunk
        if not answer.startswith(b"HTTP/1.1 200"):
            fail("GET /health on the bundle's server answered %r" % answer[:80])
    finally:
        server.terminate()
        server.wait(timeout=20)

    # bench load starts the bundle's server (through RINGLAB_BIN_DIR), not one next to its binary.
    out = os.path.join(work, "results")
    loaded = subprocess.run([run, "bench", "load", "--duration", "300ms", "--warmup", "100ms", "--connections", "2",
                             "--format", "json", "--out", out], capture_output=True, text=True, env=clean, timeout=300)
    if loaded.returncode != 0:
        fail("run bench load exited %d: %s" % (loaded.returncode, loaded.stderr[-2000:]))
    reports = [os.path.join(out, d, "load.json") for d in os.listdir(out)]
    if len(reports) != 1:
        fail("expected one load report, found %s" % reports)
    with open(reports[0]) as f:
        report = json.load(f)
    if report["rows"][0]["rounds"][0]["requests"] <= 0:
        fail("bench load measured no request")
    if "embedded server" not in report["placement"]:
        fail("bench load did not start the embedded server: %s" % report["placement"])

    # Allocator jobs: bench finds the bundle's allocators (RINGLAB_ALLOCATOR_DIR) and re-executes itself
    # through its launcher, which hands RINGLAB_PRELOAD to the bundle's loader. First the launcher alone,
    # with a program that is never sanitized: jemalloc, preloaded so, prints its statistics at exit.
    jemalloc = os.path.join(lib, "libjemalloc.so.2")
    if not os.path.exists(jemalloc):
        fail("the bundle carries no libjemalloc.so.2")
    preloaded = subprocess.run([run, "taskset", "--version"], capture_output=True, text=True, timeout=60,
                               env=dict(clean, RINGLAB_PRELOAD=jemalloc, MALLOC_CONF="stats_print:true"))
    if preloaded.returncode != 0 or "Begin jemalloc statistics" not in preloaded.stderr:
        fail("RINGLAB_PRELOAD did not preload jemalloc into taskset: %s" % preloaded.stderr[-500:])
    jobs_out = os.path.join(work, "jobs")
    jobs = subprocess.run([run, "bench", "get", "--filter", "presized", "--sizes", "10", "--allocators",
                           "system,mimalloc,jemalloc,tcmalloc", "--iteration-time", "5", "--warmup", "1",
                           "--iterations", "3", "--max-iterations", "3", "--format", "json", "--out", jobs_out],
                          capture_output=True, text=True, env=clean, timeout=300)
    if sanitized(build_dir):
        # AddressSanitizer's malloc must come first: bench refuses jobs, and says why.
        if jobs.returncode == 0 or "AddressSanitizer" not in jobs.stderr:
            fail("a sanitized bench ran allocator jobs (exit %d): %s" % (jobs.returncode, jobs.stderr[-1000:]))
    else:
        if jobs.returncode != 0:
            fail("run bench --allocators exited %d: %s" % (jobs.returncode, jobs.stderr[-2000:]))
        reports = [os.path.join(jobs_out, d, "report.json") for d in os.listdir(jobs_out)]
        with open(reports[0]) as f:
            report = json.load(f)
        ran = sorted(c["allocator"] for c in report["cases"] if c["status"] == "ok")
        if ran != ["jemalloc", "mimalloc", "system", "tcmalloc"]:
            fail("allocator jobs from the bundle ran %s: %s" % (ran, jobs.stderr[-2000:]))
        # Each job proved its allocator, loaded from the bundle's lib/ (not the machine's).
        described = report["environment"]["allocator"]
        for soname in ("libmimalloc.so.2", "libjemalloc.so.2", "libtcmalloc_minimal.so.4", "libc.so.6"):
            if "ringlab/bin/../lib/" + soname not in described:
                fail("%s did not come from the bundle: %s" % (soname, described))

    # The peers start from the bundle too; an unknown name is refused.
    for argv in (["nginx", "-v"], ["h2o", "--version"], ["wrk", "--version"], ["taskset", "--version"]):
        peer = subprocess.run([run] + argv, capture_output=True, text=True, env=clean, timeout=60)
        text = peer.stdout + peer.stderr
        if "error while loading shared libraries" in text or not text.strip():
            fail("run %s: %r" % (" ".join(argv), text[-500:]))
    refused = subprocess.run([run, "nothing"], capture_output=True, text=True, env=clean, timeout=60)
    if refused.returncode != 2:
        fail("run nothing exited %d, expected 2" % refused.returncode)

    # run peers, one short round, with a PATH that holds nothing but the shell and the text tools
    # it says it needs: no python3, curl or taskset of the machine's.
    tools_dir = os.path.join(work, "path")
    os.makedirs(tools_dir)
    for tool in PEERS_HOST_TOOLS:
        found = shutil.which(tool)
        if found is None:
            fail("this machine lacks %s, which run peers may use" % tool)
        os.symlink(found, os.path.join(tools_dir, tool))
    allowed = sorted(os.sched_getaffinity(0))
    peers_env = dict(clean, PATH=tools_dir, ROUNDS="1", DURATION="1s", WARMUP="1s", CONNECTIONS="4",
                     SERVER_CPUS=str(allowed[-1]), CLIENT_CPUS=str(allowed[0]))
    peers = subprocess.run([run, "peers"], capture_output=True, text=True, env=peers_env, timeout=300)
    if peers.returncode != 0:
        fail("run peers exited %d: %s" % (peers.returncode, (peers.stdout + peers.stderr)[-2000:]))
    for loader in ("wrk", "ringlab"):
        if not any(line.startswith(loader) and "ratios (req/s)" in line for line in peers.stdout.splitlines()):
            fail("run peers printed no %s ratios: %s" % (loader, peers.stdout[-2000:]))
        # How busy each side was, "ours S/L  nginx S/L  h2o S/L" in %: /proc/stat read around the run.
        busy = [line for line in peers.stdout.splitlines()
                if line.startswith(loader) and "median busy % server/load:" in line]
        pairs = re.findall(r"\b(ours|nginx|h2o) (\d+)/(\d+)", busy[0]) if busy else []
        if [name for name, _, _ in pairs] != ["ours", "nginx", "h2o"]:
            fail("run peers printed no %s busy percentages: %s" % (loader, peers.stdout[-2000:]))
        for name, server_pct, load_pct in pairs:
            # A loaded server's CPU and the generator's cannot have been idle, nor over 100 % busy.
            if not (0 < int(server_pct) <= 100 and 0 < int(load_pct) <= 100):
                fail("run peers: %s against %s was %s/%s %% busy" % (loader, name, server_pct, load_pct))
    # Every cell where neither side was saturated (both under 90 % busy) is named in a note, and only those.
    expected = set()
    for line in peers.stdout.splitlines():
        row = re.match(r"round (\d+) (wrk|ringlab):\s+(.*)", line)
        if not row:
            continue
        for name, server_pct, load_pct in re.findall(r"(ours|nginx|h2o)\s+\d+ \[\s*[\d.]+ us\s+(\d+)/\s*(\d+)%\]",
                                                      row.group(3)):
            if int(server_pct) < 90 and int(load_pct) < 90:
                expected.add("round %s %s against %s" % (row.group(1), row.group(2), name))
    noted = set(re.findall(r"^note: (round \d+ \w+ against \w+): neither side was saturated", peers.stdout, re.M))
    if noted != expected:
        fail("run peers: cells where neither side was saturated %s, noted %s" % (sorted(expected), sorted(noted)))
    print("ok: the bundle runs the server, bench load, allocator jobs, the peers and tools/peers from its own "
          "libraries")


def sanitized(build_dir):
    """Whether the bundled binaries were built with RINGLAB_SANITIZE (CMakeCache.txt says)."""
    with open(os.path.join(build_dir, "CMakeCache.txt")) as f:
        return any(line.strip() in ("RINGLAB_SANITIZE:BOOL=ON", "RINGLAB_SANITIZE:BOOL=TRUE") for line in f)


# What tools/peers may take from the machine when it runs from a bundle.
PEERS_HOST_TOOLS = ("sh", "bash", "awk", "sed", "grep", "head", "tail", "cat", "seq", "mktemp", "chmod", "rm",
                    "mkdir", "sleep", "timeout", "id", "cmp", "getconf", "ls", "tr", "sort", "wc", "dirname",
                    "nproc")


if __name__ == "__main__":
    main()
