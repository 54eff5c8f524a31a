# (no sources yet)
