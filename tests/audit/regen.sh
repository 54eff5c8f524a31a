#!/bin/bash
# Regenerate what tests/audit compares against, from the build directory:
#
#   AGENTBOX=$PWD/agentbox ../tests/audit/regen.sh
#
#   tests/audit/fixtures/<hand-made>/   fixtures.py's output
#   tests/audit/golden/<name>.txt|json  the text and JSON reports of GOLDEN below
#   man/agentbox-audit.8                its RULES section (audit --rules --format man)
#                                       and EXAMPLES (real output, trimmed)
#
# Review the diff before committing: a change of output is a change of what
# reviewers are told.  The real-world fixtures come from capture.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
AGENTBOX=${AGENTBOX:?set AGENTBOX to the agentbox binary}
export NO_COLOR=1

python3 "$here/fixtures.py" --tree "$here/fixtures"

# Goldens: each fixture is copied to a directory of a fixed-length name so
# that the text wraps the same wherever the tree is; @DIR@ stands for it.
mkdir -p "$here/golden"
work=$(mktemp -d /tmp/agentbox-audit-XXXXXXXX)
trap 'rm -rf "$work"' EXIT
for name in $(sed 's/#.*//' "$here/golden/LIST"); do
  cp -a "$here/fixtures/$name" "$work/$name"
  "$AGENTBOX" audit --landlock-abi 7 --bundle "$work/$name" >"$work/out.txt" || :
  "$AGENTBOX" audit --landlock-abi 7 --bundle "$work/$name" --format json >"$work/out.json" || :
  sed "s|$work|@DIR@|g" "$work/out.txt" >"$here/golden/$name.txt"
  sed "s|$work|@DIR@|g" "$work/out.json" >"$here/golden/$name.json"
done

# The man page: replace what lies between the BEGIN and END markers.
replace () # MARKER FILE-WITH-CONTENT
{
  python3 - "$top/man/agentbox-audit.8" "$1" "$2" <<'PY'
import sys
page, marker, content = sys.argv[1], sys.argv[2], open(sys.argv[3]).read()
text = open(page).read()
begin = text.index('.\\" BEGIN ' + marker)
begin = text.index("\n", begin) + 1
end = text.index('.\\" END ' + marker)
open(page, "w").write(text[:begin] + content + text[end:])
PY
}
"$AGENTBOX" audit --rules --format man >"$work/rules.man"
replace RULES "$work/rules.man"
roff () { sed -e 's/\\/\\e/g' -e 's/^\./\\\&./' -e "s/^'/\\\\\\&'/"; }
# The audits below exit 1 for their findings, and head cuts one short.
set +o pipefail
{
  echo "The hardened profile of \\fBagentbox spec\\fR (the mechanism map trimmed):"
  echo ".PP"
  echo ".nf"
  echo '.ft CR'
  # Shown at /mnt, bound there in a mount namespace of its own (as root), so
  # that the path in the example is a short fixed one and wraps as shown.
  cp -a "$here/fixtures/agentbox-spec" "$work/b"
  unshare --mount --propagation private sh -c "mount --bind '$work/b' /mnt && '$AGENTBOX' audit --bundle /mnt" |
    awk '/^ *[0-9]+ (network|paths|seccomp) /{skip=1} /^ *[0-9]+ /{if(!/network|paths|seccomp/)skip=0} /^Findings/{skip=0} !skip' |
    head -60 | roff
  echo '.ft'
  echo ".fi"
  echo ".PP"
  echo "The findings of runc's default config (\\fBrunc spec\\fR), as JSON paths and ids:"
  echo ".PP"
  echo ".nf"
  echo '.ft CR'
  "$AGENTBOX" audit --bundle "$here/fixtures/runc-spec" --format json |
    python3 -c 'import json,sys
for f in json.load(sys.stdin)["findings"]: print("%-7s %-15s %s" % (f["severity"], f["id"], f["path"]))' | roff
  echo '.ft'
  echo ".fi"
} >"$work/examples.man"
replace EXAMPLES "$work/examples.man"
echo "regenerated: fixtures, golden/, man/agentbox-audit.8"
