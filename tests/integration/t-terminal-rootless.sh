#!/bin/bash
# t-terminal.sh again, the runtime run as an unprivileged user (lib.sh "rootless":
# AB_ROOTLESS=1); what needs host root is skipped there, naming why.
AB_ROOTLESS=1 exec "$(dirname "$0")/t-terminal.sh" "$@"
