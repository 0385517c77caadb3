#!/usr/bin/env python3
"""docs/results: every results page names the command that measured it (tools/bench, or tools/profile for a
run with a profile), the commit it was measured at
and the command that made the page, so that every figure in the docs can be traced and redone; and the
README's headline excerpt comes from one of them.

usage: results_pages_test.py SOURCE_DIR
"""
import os
import re
import sys


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def main():
    source = sys.argv[1]
    folder = os.path.join(source, "docs", "results")
    pages = sorted(f for f in os.listdir(folder) if f.endswith(".md") and f != "README.md")
    if not pages:
        fail("docs/results holds no results page")
    for name in pages:
        with open(os.path.join(folder, name), encoding="utf-8") as f:
            text = f.read()
        for what, pattern in (("the command", r"^\| Command \| `tools/(bench|profile)(?: [^`]*)?` \|"),
                              ("a commit", r"^\| Commit \| `[0-9a-f]{7,40}`"),
                              ("the command that made the page", r"^\| Page made by \| `tools/bench report [^`]+` \|")):
            if not re.search(pattern, text, re.M):
                fail("%s does not name %s" % (name, what))
        path = re.search(r"(?<![\w.~])/(tmp|home|work|root|srv|mnt|opt)/\S*", text)
        if path:
            fail("%s names a machine path (%s): make the page from a run with the default folders" % (name, path.group(0)))
        if re.search(r"^\| Command \| `tools/profile", text, re.M) and "\n## Where the CPU goes\n" not in text:
            fail("%s was measured under tools/profile but shows no profile: make the page from the run's folder, "
                 "which holds its profile.json" % name)
        if "with uncommitted changes" in text:
            fail("%s was measured with uncommitted changes: its commit does not say what ran" % name)
    with open(os.path.join(source, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    # Markdown link targets: (docs/results/<page>.md)
    linked = re.findall(r"\(docs/results/([^)\s/]+\.md)\)", readme)
    if not any(page in pages for page in linked):
        fail("the README links no results page of docs/results (%s)" % ", ".join(linked))
    print("%d results pages name their command, commit and page command" % len(pages))


if __name__ == "__main__":
    main()
