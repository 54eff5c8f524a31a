# The shape of the tree: floors and rooms (scripts/layers.conf), the way
# calls go, exported functions, function lengths (scripts/check-tree.py).
TESTS += tests/tree/t-tree.py
EXTRA_DIST += tests/tree/t-tree.py scripts/check-tree.py scripts/layers.conf docs/architecture.md
# agentbox compiles against musl (scripts/static-musl.sh --compile-check).
TESTS += tests/tree/t-musl.sh
EXTRA_DIST += tests/tree/t-musl.sh scripts/static-musl.sh
