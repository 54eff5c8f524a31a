#!/usr/bin/env python3
"""oci-image.py ROOTFS OUT.tar NAME [ENTRYPOINT...]: ROOTFS as an OCI image
archive of one uncompressed layer (image-layout: oci-layout, index.json,
blobs), named NAME for `ctr images import`.  PATH=/bin; the command is
/bin/sh, or ENTRYPOINT when given (t-cri.sh's pod sandbox image)."""
import hashlib, io, json, os, sys, tarfile

rootfs, out, name = sys.argv[1:4]
entrypoint = sys.argv[4:]
def blob(data):
    return "sha256:" + hashlib.sha256(data).hexdigest(), data
buf = io.BytesIO()
with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
    for entry in sorted(os.listdir(rootfs)):
        t.add(os.path.join(rootfs, entry), arcname=entry)
layer_d, layer = blob(buf.getvalue())
cfg_d, cfg = blob(json.dumps({"architecture": "amd64", "os": "linux",
    "config": {"Entrypoint": entrypoint, "Env": ["PATH=/bin"]} if entrypoint else
              {"Cmd": ["/bin/sh"], "Env": ["PATH=/bin"]},
    "rootfs": {"type": "layers", "diff_ids": [layer_d]}}).encode())
man_d, man = blob(json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
    "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": cfg_d, "size": len(cfg)},
    "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": layer_d, "size": len(layer)}]}).encode())
index = json.dumps({"schemaVersion": 2, "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json",
    "digest": man_d, "size": len(man), "annotations": {"org.opencontainers.image.ref.name": name,
    "io.containerd.image.name": name}}]}).encode()
with tarfile.open(out, "w") as t:
    def add(path, data):
        ti = tarfile.TarInfo(path); ti.size = len(data); ti.mode = 0o644
        t.addfile(ti, io.BytesIO(data))
    add("oci-layout", b'{"imageLayoutVersion":"1.0.0"}')
    add("index.json", index)
    for d, data in ((layer_d, layer), (cfg_d, cfg), (man_d, man)):
        add("blobs/sha256/" + d.split(":")[1], data)
