#!/usr/bin/env python3
"""tools/ab-source: the tree of a plain revision, and of HARNESS:CODE:FOLDERS (HARNESS's tree with those
folders replaced whole by CODE's), in a small repository made here; the refusals of what it cannot read.

usage: ab_source_test.py TOOLS_AB_SOURCE WORK_DIR
"""
import os
import shutil
import subprocess
import sys


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True, text=True).stdout.strip()


def write(repo, path, text):
    full = os.path.join(repo, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w", encoding="utf-8") as f:
        f.write(text)


def commit(repo, message, files):
    """Writes `files` (path: text) and commits every change; returns the commit."""
    for path, text in files.items():
        write(repo, path, text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def source(tool, repo, revision):
    return subprocess.run([tool, "--repo", repo, revision], capture_output=True, text=True)


def main():
    tool, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    repo = os.path.join(work, "repo")
    os.makedirs(repo)
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "test@example.invalid")
    git(repo, "config", "user.name", "test")
    # The old commit: its code under test and its harness.
    old = commit(repo, "old", {"CMakeLists.txt": "old build\n", "code/src/a.cpp": "old a\n",
                               "code/include/a.hpp": "old header\n", "bench/runner.cpp": "old runner\n"})
    # The new commit: the code changed, a file added to its folder, a newer harness and header.
    new = commit(repo, "new", {"CMakeLists.txt": "new build\n", "code/src/a.cpp": "new a\n",
                               "code/src/added.cpp": "only new\n", "code/include/a.hpp": "new header\n",
                               "bench/runner.cpp": "new runner\n"})

    # A plain revision: its tree as committed, nothing carried.
    plain = source(tool, repo, old[:7])
    if plain.returncode != 0:
        fail("a plain revision: exit %d: %s" % (plain.returncode, plain.stderr))
    lines = plain.stdout.split("\n")
    if lines[0] != os.path.join(repo, "build", "ab", old, "src") or lines[1] != "":
        fail("a plain revision printed %r" % plain.stdout)
    if read(os.path.join(lines[0], "code/src/a.cpp")) != "old a\n":
        fail("a plain revision's tree is not its commit's")

    # The new harness carrying the old code under test (code/src), its header the harness's.
    composed = source(tool, repo, "%s:%s:code/src" % (new[:7], old[:7]))
    if composed.returncode != 0:
        fail("a composed revision: exit %d: %s" % (composed.returncode, composed.stderr))
    tree, label = composed.stdout.split("\n")[:2]
    if tree != os.path.join(repo, "build", "ab", "%s+code-%s-code-src" % (new, old), "src"):
        fail("the composed tree is at %s" % tree)
    if label != "%s (code/src)" % old:
        fail("the composed revision's label is %r" % label)
    expected = {"code/src/a.cpp": "old a\n", "code/include/a.hpp": "new header\n",
                "bench/runner.cpp": "new runner\n", "CMakeLists.txt": "new build\n"}
    for path, text in expected.items():
        if read(os.path.join(tree, path)) != text:
            fail("composed tree: %s is %r, expected %r" % (path, read(os.path.join(tree, path)), text))
    if os.path.exists(os.path.join(tree, "code/src/added.cpp")):
        fail("composed tree: a file only the harness has in a replaced folder stayed behind")
    # Made once: a second call finds it and prints the same.
    again = source(tool, repo, "%s:%s:code/src" % (new[:7], old[:7]))
    if again.returncode != 0 or again.stdout != composed.stdout:
        fail("a second call for the same composed revision printed %r" % again.stdout)
    # Two folders: the label lists both.
    both = source(tool, repo, "%s:%s:code/src,code/include" % (new[:7], old[:7]))
    if both.returncode != 0 or both.stdout.split("\n")[1] != "%s (code/src, code/include)" % old:
        fail("two folders: %r %r" % (both.stdout, both.stderr))

    # Refusals, each exit 2 with a message, nothing made.
    for revision, words in [("%s:%s" % (new, old), "HARNESS:CODE:FOLDERS"),
                            ("%s::code/src" % new, "HARNESS:CODE:FOLDERS"),
                            ("%s:%s:code/src:x" % (new, old), "HARNESS:CODE:FOLDERS"),
                            ("nosuchrev:%s:code/src" % old, "is not a revision"),
                            ("%s:nosuchrev:code/src" % new, "is not a revision"),
                            ("%s:%s:nosuch" % (new, old), "has no nosuch"),
                            ("%s:%s:../code" % (new, old), "not a folder of the tree"),
                            ("%s:%s:/code" % (new, old), "not a folder of the tree"),
                            ("nosuchrev", "is not a revision")]:
        refused = source(tool, repo, revision)
        if refused.returncode != 2 or words not in refused.stderr:
            fail("%s: exit %d, %r (expected 2 and %r)" % (revision, refused.returncode, refused.stderr, words))
    print("tools/ab-source: plain and composed trees, and 9 refusals")


if __name__ == "__main__":
    main()
