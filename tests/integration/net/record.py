#!/usr/bin/env python3
"""Read what agentbox reported about the network, one fact per line, sorted,
so that shell tests compare whole sets with `is`.

    record.py violations FILE    structuredContent.violations of a --record frame:
                                   denied PROTO ADDRESS PORT COUNT        (by nftables)
                                   refused PROTOCOL NAME ADDRESS PORT RULE (by the proxy)
    record.py error FILE         structuredContent.error.code ("null" when none)
    record.py decisions FILE     _meta["dev.agentbox/egress"] of a --record frame, or
                                 the JSON array a detached container's daemon writes:
                                   allowed|refused PROTOCOL NAME ADDRESS PORT RULE
    record.py has-decisions FILE "yes" when the frame carries _meta["dev.agentbox/egress"]
    record.py nft-denied NETNS   the denied-destination sets of the agentbox table in the
                                 network namespace file NETNS (read with nft -j through
                                 nsenter, from the host): PROTO ADDRESS PORT COUNT
    record.py nft-ruleset-empty NETNS   "empty" or the ruleset of that namespace

Exit status 1 (with a message) when the input is not what it should be.
"""
import json
import subprocess
import sys

PROTO = {6: "tcp", 17: "udp", 1: "icmp", 58: "icmpv6"}


def frame(path):
    with open(path) as f:
        return json.load(f)


def structured(path):
    return frame(path)["result"]["structuredContent"]


def violations(path):
    out = []
    for v in structured(path)["violations"]:
        if v.get("by") == "nftables":
            out.append("denied %s %s %d %d" % (v["protocol"], v["address"], v["port"], v["count"]))
        else:
            out.append("refused %s %s %s %d %s" % (v["protocol"], v["name"], v["address"] or "-", v["port"],
                                                   v["rule"]))
    return out


def decision_lines(arr):
    return ["%s %s %s %s %d %s" % ("allowed" if d["allowed"] else "refused", d["protocol"], d["name"],
                                   d["address"] or "-", d["port"], d["rule"]) for d in arr]


def decisions(path):
    doc = frame(path)
    if isinstance(doc, dict):
        doc = doc["result"]["_meta"]["dev.agentbox/egress"]
    return decision_lines(doc)


def nft_denied(netns):
    r = subprocess.run(["nsenter", "--net=" + netns, "nft", "-j", "list", "table", "inet", "agentbox"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, check=True)
    out = []
    for obj in json.loads(r.stdout)["nftables"]:
        s = obj.get("set")
        if not s or not s["name"].startswith("denied"):
            continue
        for e in s.get("elem", []):
            e = e["elem"]
            val = e["val"]["concat"]
            port = val[2] if len(val) > 2 else 0
            proto = val[1] if isinstance(val[1], str) else PROTO.get(val[1], str(val[1]))
            out.append("%s %s %d %d" % (proto, val[0], port, e["counter"]["packets"]))
    return out


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    cmd, arg = argv[1], argv[2]
    if cmd == "violations":
        lines = violations(arg)
    elif cmd == "error":
        err = structured(arg)["error"]
        lines = [err["code"] if err else "null"]
    elif cmd == "decisions":
        lines = decisions(arg)
    elif cmd == "has-decisions":
        lines = ["yes" if "dev.agentbox/egress" in frame(arg)["result"]["_meta"] else "no"]
    elif cmd == "nft-denied":
        lines = nft_denied(arg)
    else:
        sys.exit(__doc__)
    for line in sorted(lines):
        print(line)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except (OSError, ValueError, KeyError, TypeError, IndexError, subprocess.CalledProcessError) as e:
        sys.exit("record.py %s: %s" % (" ".join(sys.argv[1:]), e))
