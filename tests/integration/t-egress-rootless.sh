#!/bin/bash
# t-egress.sh again, the runtime run as an unprivileged user (lib.sh "rootless":
# AB_ROOTLESS=1): the domain allowlist, the proxy and the DNS stub in a
# network namespace of the container's user namespace, the detached daemon
# tied to the init (no cgroup) instead of the cgroup.
AB_ROOTLESS=1 exec "$(dirname "$0")/t-egress.sh" "$@"
