#!/usr/bin/env python3
"""A minimal CRI v1 client (Debian 12 has no crictl), for t-cri.sh.

    cri.py SOCKET call METHOD [REQUEST-JSON] [--get FIELD.PATH]
    cri.py SOCKET exec [--timeout SECS] CONTAINER-ID ARG...

The messages come from cri.proto beside this file, compiled by protoc into
the directory named by $CRI_PB_DIR (the test does that once).  `call` sends
one RuntimeService or ImageService RPC; the request is the message in its
JSON form (field names as in the .proto), the response is printed the same
way, or with --get only one field of it (a string bare, anything else as
JSON).  `exec` is ExecSync the way `crictl exec -s` does it: the command's
stdout and stderr on ours, and its exit code as our exit status.

An RPC that fails prints "METHOD: CODE: details" on stderr and exits 1
(`exec` exits 125, which no test command uses); usage errors exit 2.
"""

import json
import os
import sys

sys.path.insert(0, os.environ.get("CRI_PB_DIR", "."))

import grpc  # noqa: E402  (python3-grpcio)
from google.protobuf import json_format  # noqa: E402  (python3-protobuf)

import cri_pb2  # noqa: E402  (protoc --python_out of cri.proto)

IMAGE_METHODS = {"ImageStatus"}


def stub(channel, method):
    service = "ImageService" if method in IMAGE_METHODS else "RuntimeService"
    req_type = getattr(cri_pb2, method + "Request", None)
    resp_type = getattr(cri_pb2, method + "Response", None)
    if req_type is None or resp_type is None:
        sys.exit("cri.py: no RPC %s in cri.proto" % method)
    rpc = channel.unary_unary("/runtime.v1.%s/%s" % (service, method),
                              request_serializer=req_type.SerializeToString,
                              response_deserializer=resp_type.FromString)
    return rpc, req_type


def invoke(sock, method, request_json):
    with grpc.insecure_channel("unix://" + sock) as channel:
        rpc, req_type = stub(channel, method)
        req = json_format.Parse(request_json, req_type())
        timeout = float(os.environ.get("CRI_TIMEOUT", "60"))
        try:
            return rpc(req, timeout=timeout)
        except grpc.RpcError as e:
            print("%s: %s: %s" % (method, e.code().name, e.details()), file=sys.stderr)
            return None


def get(msg, path):
    v = json_format.MessageToDict(msg, preserving_proto_field_name=True,
                                  including_default_value_fields=True)
    for k in path.split("."):
        v = v[int(k)] if isinstance(v, list) else v[k]
    return v if isinstance(v, str) else json.dumps(v, sort_keys=True)


def main(argv):
    if len(argv) < 3 or argv[2] not in ("call", "exec"):
        sys.exit(__doc__)
    sock, cmd, args = argv[1], argv[2], argv[3:]
    if cmd == "call":
        field = None
        if "--get" in args:
            i = args.index("--get")
            field = args[i + 1]
            del args[i:i + 2]
        if not 1 <= len(args) <= 2:
            print(__doc__, file=sys.stderr)
            return 2
        resp = invoke(sock, args[0], args[1] if len(args) == 2 else "{}")
        if resp is None:
            return 1
        if field is not None:
            print(get(resp, field))
        else:
            print(json_format.MessageToJson(resp, preserving_proto_field_name=True))
        return 0
    timeout = 0
    if args[:1] == ["--timeout"]:
        timeout, args = int(args[1]), args[2:]
    if len(args) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    req = json.dumps({"container_id": args[0], "cmd": args[1:], "timeout": timeout})
    resp = invoke(sock, "ExecSync", req)
    if resp is None:
        return 125
    sys.stdout.buffer.write(resp.stdout)
    sys.stderr.buffer.write(resp.stderr)
    return resp.exit_code


if __name__ == "__main__":
    sys.exit(main(sys.argv))
