#!/bin/sh
# From a fresh Debian 12 machine (as root): install the build dependencies,
# build agentbox, and run one command in the built-in sandbox — a read-only
# view of the host's /usr and /etc with secrets masked, every namespace,
# no capabilities, seccomp, no network — printing the result record.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/install-deps.sh" --if-needed
agentbox=$("$top/scripts/build.sh")
ws=$(mktemp -d /tmp/agentbox-workspace.XXXXXX)
echo "print('hello from a sandboxed python', 6 * 7)" > "$ws/hello.py"
echo "== agentbox run --default (workspace $ws)" >&2
set +e
"$agentbox" run --default --workspace "$ws" --timeout 30s --record /dev/stdout quickstart -- \
  sh -c 'python3 hello.py; id; echo "shadow: $(cat /etc/shadow | wc -c) bytes"; touch /usr/x 2>&1;
         python3 -c "import socket; socket.create_connection((\"192.0.2.1\", 80), timeout=3)" 2>&1 | tail -1;
         date > made-in-sandbox.txt'
rc=$?
set -e
echo "== exit status $rc; files now in the workspace:" >&2
ls -l "$ws" >&2
rm -rf "$ws"
exit "$rc"
