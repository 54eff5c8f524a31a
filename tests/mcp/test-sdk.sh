#!/bin/sh
# TAP: `agentbox mcp` driven by the official MCP TypeScript SDK clients
# (tests/mcp/interop.mjs).  Skips when node or the SDK packages are missing:
# install them with `npm ci --ignore-scripts` in tests/mcp.
dir="${AB_TOP_SRCDIR:-.}/tests/mcp"
agentbox="${AGENTBOX:-./agentbox}"
if ! command -v node >/dev/null 2>&1; then
  echo "1..0 # SKIP node is not installed"
  exit 0
fi
if [ ! -d "$dir/node_modules/@modelcontextprotocol/sdk" ] || [ ! -d "$dir/node_modules/@modelcontextprotocol/client" ]; then
  echo "1..0 # SKIP the MCP SDKs are not installed (npm ci --ignore-scripts in tests/mcp)"
  exit 0
fi
root=$(mktemp -d) || exit 1
# the sandboxes' user namespaces traverse the state root's parents
chmod 711 "$root"
flag=
if [ "$(id -u)" != 0 ] || ! "$agentbox" --root "$root" run --default probe -- true </dev/null >/dev/null 2>&1; then
  flag=--no-sandbox
fi
cd "$dir" && node interop.mjs "$agentbox" "$root" $flag
rc=$?
rm -rf "$root"
exit $rc
