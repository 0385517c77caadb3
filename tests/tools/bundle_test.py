#!/usr/bin/env python3
"""tools/bundle: the tarball unpacked in a fresh folder starts the server, bench (which starts the
bundle's server itself) and the peers through the bundled loader and libraries, with an empty
LD_LIBRARY_PATH; the libraries the server maps come from the bundle, not from the system.

usage: bundle_test.py TOOLS_BUNDLE BUILD_DIR WORK_DIR
"""
import json
import os
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

    # The peers start from the bundle too; an unknown name is refused.
    for argv in (["nginx", "-v"], ["h2o", "--version"], ["wrk", "--version"]):
        peer = subprocess.run([run] + argv, capture_output=True, text=True, env=clean, timeout=60)
        text = peer.stdout + peer.stderr
        if "error while loading shared libraries" in text or not text.strip():
            fail("run %s: %r" % (" ".join(argv), text[-500:]))
    refused = subprocess.run([run, "nothing"], capture_output=True, text=True, env=clean, timeout=60)
    if refused.returncode != 2:
        fail("run nothing exited %d, expected 2" % refused.returncode)
    print("ok: the bundle runs the server, bench load and the peers from its own libraries")


if __name__ == "__main__":
    main()
