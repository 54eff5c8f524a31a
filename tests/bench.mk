# Benchmarks (tests/bench/, results in docs/benchmarks.md): never part of
# `make check`, which only runs the smoke test (each figure with N=2,
# output checked for form, no timing asserted).  `make bench` runs every
# figure against the agentbox just built, runc and crun (each skipped with a
# `skip` line when missing), prints the lines and keeps them in
# bench-results.txt:
#   make bench                    N=100 (throughput: 3 rounds of 200 runs)
#   make bench BENCH_N=200        more runs per figure
#   make bench BENCH_FIGURES=exec one figure (profile: where the time goes)
#   make bench BENCH_GAP_MS=100   an idle pause before every timed run (lone runs)
#   make bench BENCH_FIGURES=proxy what the egress proxy costs an HTTP client
#                                 (BENCH_PROXY_MB, BENCH_PROXY_BATCH, BENCH_PROXY_STRACE)
# Two builds side by side (not part of `make bench`): tests/bench/compare.sh.
BENCH_FIGURES = start-hardened start-runc-spec start-rootless exec throughput footprint mcp profile netns-run proxy \
	workspace-start workspace-diff workspace-apply landlock-start
BENCH_N ?=
BENCH_GAP_MS ?=
BENCH_FIGURE_FILES = \
	tests/bench/start-hardened.sh \
	tests/bench/start-runc-spec.sh \
	tests/bench/start-rootless.sh \
	tests/bench/exec.sh \
	tests/bench/throughput.sh \
	tests/bench/footprint.sh \
	tests/bench/mcp.sh \
	tests/bench/profile.sh \
	tests/bench/netns-run.sh \
	tests/bench/proxy.sh \
	tests/bench/workspace-start.sh \
	tests/bench/workspace-diff.sh \
	tests/bench/workspace-apply.sh \
	tests/bench/landlock-start.sh \
	tests/bench/compare.sh

TESTS += tests/bench/smoke.sh
EXTRA_DIST += $(BENCH_FIGURE_FILES) tests/bench/lib.sh tests/bench/workspace-lib.sh tests/bench/bench.py tests/bench/proxy.py tests/bench/smoke.sh \
	docs/benchmarks.md docs/bench/rootless-bc5a8b9-run1.txt docs/bench/rootless-ff6a442-run2.txt docs/bench/before-3e38eed-run1.txt docs/bench/before-3e38eed-run2.txt \
	docs/bench/before-3e38eed-lone.txt docs/bench/before-3e38eed-mcp400.txt docs/bench/before-3e38eed-profile.txt \
	docs/bench/before-ca2e398-run3.txt docs/bench/after-c00527b-run1.txt docs/bench/after-c00527b-lone.txt \
	docs/bench/after-final-run1.txt docs/bench/after-final-lone.txt \
	docs/bench/after-third-run1.txt docs/bench/after-third-run2.txt docs/bench/after-third-lone.txt \
	docs/bench/after-fourth-static-run1.txt docs/bench/after-fourth-static-run2.txt \
	docs/bench/after-fourth-static-lone.txt docs/bench/after-fourth-dynamic-run1.txt \
	docs/bench/after-fifth-static-run1.txt docs/bench/after-fifth-static-run2.txt \
	docs/bench/after-fifth-static-lone.txt \
	docs/bench/proxy-before-e4cd3a6-run1.txt docs/bench/proxy-before-e4cd3a6-run2.txt \
	docs/bench/proxy-before-e4cd3a6-run3.txt docs/bench/proxy-after-0283798-run1.txt \
	docs/bench/proxy-after-0283798-run2.txt docs/bench/proxy-after-0283798-run3.txt \
	docs/bench/workspace-run1.txt docs/bench/layers-297a788.txt \
	docs/bench/proxy-floor-b4885ab-run1.txt docs/bench/proxy-floor-b4885ab-run2.txt \
	docs/bench/proxy-floor-b4885ab-run3.txt
CLEANFILES += bench-results.txt bench-failed

.PHONY: bench
bench: agentbox tests/egress/egress-driver tests/egress/httpbench tests/egress/relaybound
	@rc=0; : >bench-results.txt; \
	for f in $(BENCH_FIGURES); do \
	  { AB_TOP_SRCDIR='$(abs_top_srcdir)' AB_TOP_BUILDDIR='$(abs_top_builddir)' \
	    AGENTBOX='$(abs_top_builddir)/agentbox' PYTHON3='$(PYTHON3)' BENCH_N='$(BENCH_N)' BENCH_GAP_MS='$(BENCH_GAP_MS)' \
	    bash '$(abs_top_srcdir)/tests/bench/'$$f.sh 2>&1 || echo "make bench: $$f failed" >bench-failed; } | \
	    tee -a bench-results.txt; \
	done; \
	echo "make bench: every line is in $(abs_top_builddir)/bench-results.txt"; \
	if [ -e bench-failed ]; then cat bench-failed; rm -f bench-failed; exit 1; fi
