# Integration tests: TAP shell scripts that drive a runc-compatible runtime
# ($RUNTIME, default the agentbox just built) against bundles whose minimal
# rootfs holds tests/helper/abtest and busybox.  They need root; without it,
# or while the runtime lacks a command a file needs, the file is skipped.
# By hand, from the build directory:
#   RUNTIME=/usr/sbin/runc $(srcdir)/tests/integration/t-lifecycle.sh
AB_INTEGRATION_TESTS = \
	tests/integration/t-harness.sh \
	tests/integration/t-abtest.sh \
	tests/integration/t-lifecycle.sh \
	tests/integration/t-run.sh \
	tests/integration/t-agent-host.sh \
	tests/integration/t-cli.sh \
	tests/integration/t-stdio.sh \
	tests/integration/t-terminal.sh \
	tests/integration/t-seccomp-notify.sh \
	tests/integration/t-exec.sh \
	tests/integration/t-kill.sh \
	tests/integration/t-control.sh \
	tests/integration/t-events.sh \
	tests/integration/t-podman.sh \
	tests/integration/t-containerd.sh \
	tests/integration/t-cri.sh \
	tests/integration/t-faults.sh \
	tests/integration/t-crash.sh \
	tests/integration/t-fault-sweep.sh \
	tests/integration/t-namespaces.sh \
	tests/integration/t-state.sh \
	tests/integration/t-schemas.sh \
	tests/integration/t-netns.sh \
	tests/integration/t-egress.sh \
	tests/integration/t-supervise.sh \
	tests/integration/t-records.py \
	tests/integration/t-isolation.sh \
	tests/integration/t-security.sh \
	tests/integration/t-hooks.sh \
	tests/integration/t-cgroups.sh \
	tests/integration/t-cgroup-view.sh \
	tests/integration/t-sandbox.sh \
	tests/integration/t-landlock.sh \
	tests/integration/t-landlock-podman.sh \
	tests/integration/t-workspace.sh \
	tests/integration/t-oci-configs.sh \
	tests/integration/t-rootfs.sh \
	tests/integration/t-hostile.sh \
	tests/integration/t-shortcuts.sh \
	tests/integration/t-home.sh \
	tests/integration/t-audit-live.sh \
	tests/integration/t-validate-create.sh \
	tests/integration/t-rootless.sh \
	tests/integration/t-lifecycle-rootless.sh \
	tests/integration/t-exec-rootless.sh \
	tests/integration/t-run-rootless.sh \
	tests/integration/t-kill-rootless.sh \
	tests/integration/t-sandbox-rootless.sh \
	tests/integration/t-state-rootless.sh \
	tests/integration/t-stdio-rootless.sh \
	tests/integration/t-terminal-rootless.sh \
	tests/integration/t-supervise-rootless.sh \
	tests/integration/t-control-rootless.sh \
	tests/integration/t-egress-rootless.sh
TESTS += $(AB_INTEGRATION_TESTS)
EXTRA_DIST += $(AB_INTEGRATION_TESTS) \
	tests/integration/lib.sh \
	tests/integration/cgroot.sh \
	tests/integration/cfg.py \
	tests/integration/leftovers.py \
	tests/integration/oci-image.py \
	tests/integration/cri/cri.proto \
	tests/integration/cri/cri.py \
	docs/kubernetes.md \
	docs/rootless.md \
	docs/runc-compat.md \
	docs/landlock.md \
	tests/integration/pty-drive.py \
	tests/integration/fd-recv.py \
	tests/integration/seccomp-agent.py \
	tests/integration/deny-userns.py \
	tests/integration/net/net.sh \
	tests/integration/net/record.py \
	tests/integration/net/events.py \
	tests/integration/net/upstream.py \
	tests/integration/net/probes.sh \
	tests/integration/net/relay.py

# The fault sweep, all of it (a bounded sample is t-fault-sweep.sh, in
# `make check`): every syscall occurrence of create, run and run --default
# made to fail, or its process killed, each checked from the host
# (scripts/fault-sweep.py).  Root and strace.
#   make fault-sweep                        everything, two jobs
#   make fault-sweep FAULT_SWEEP_FLAGS='--commands run --points mount#7:EIO'
FAULT_SWEEP_FLAGS ?=
EXTRA_DIST += scripts/fault-sweep.py docs/crash-safety.md
.PHONY: fault-sweep
fault-sweep: agentbox agentbox-init tests/helper/abtest
	AB_TOP_BUILDDIR='$(abs_top_builddir)' AGENTBOX='$(abs_top_builddir)/agentbox' \
	  AGENTBOX_INIT='$(abs_top_builddir)/agentbox-init' ABTEST='$(abs_top_builddir)/tests/helper/abtest' \
	  $(PYTHON3) '$(abs_top_srcdir)/scripts/fault-sweep.py' $(FAULT_SWEEP_FLAGS)
