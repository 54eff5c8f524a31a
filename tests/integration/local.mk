# Integration tests: TAP shell scripts that drive a runc-compatible runtime
# ($RUNTIME, default the agentbox just built) against bundles whose minimal
# rootfs holds tests/helper/abtest and busybox.  They need root; without it,
# or while the runtime lacks a command a file needs, the file is skipped.
#   RUNTIME=/usr/sbin/runc tests/integration/t-lifecycle.sh   (by hand)
AB_INTEGRATION_TESTS = \
	tests/integration/t-harness.sh \
	tests/integration/t-abtest.sh \
	tests/integration/t-lifecycle.sh \
	tests/integration/t-run.sh \
	tests/integration/t-cli.sh
TESTS += $(AB_INTEGRATION_TESTS)
EXTRA_DIST += $(AB_INTEGRATION_TESTS) \
	tests/integration/lib.sh \
	tests/integration/cfg.py \
	tests/integration/leftovers.py
