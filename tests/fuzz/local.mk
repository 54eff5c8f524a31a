# The config.json fuzzer (libFuzzer, clang).  Not part of `make check`:
#
#   make fuzz                        build tests/fuzz/fuzz-config
#   make fuzz-run FUZZ_SECONDS=60    fuzz a copy of the seed corpus; fails on any crash
#
# The target is compiled straight from the sources it exercises (the parser,
# the validator and what they use), so it does not depend on how the rest
# of the tree was configured.  The seed corpus is tests/fuzz/corpus/ plus
# the parser's fixtures in tests/unit/data/; the run works on a copy in
# tests/fuzz/corpus-work/ and leaves crash-*, leak-* and timeout-*
# reproducers in tests/fuzz/.
FUZZ_CC = clang
FUZZ_COPTS = -std=gnu17 -g -O1 -fno-omit-frame-pointer \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
FUZZ_SECONDS = 60
FUZZ_RUN_OPTS = -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
FUZZ_SRCS = \
	$(srcdir)/tests/fuzz/fuzz-config.c \
	$(srcdir)/base/json.c $(srcdir)/base/json-get.c $(srcdir)/spec/tables.c \
	$(srcdir)/spec/parse-util.c $(srcdir)/spec/parse.c \
	$(srcdir)/spec/parse-linux.c $(srcdir)/spec/parse-resources.c \
	$(srcdir)/spec/validate.c $(srcdir)/spec/annotations.c $(srcdir)/spec/landlock.c $(srcdir)/base/gen.c \
	$(srcdir)/spec/net-allow.c $(srcdir)/spec/egress-policy.c \
	$(srcdir)/base/error.c $(srcdir)/base/util.c $(srcdir)/base/text.c

EXTRA_DIST += tests/fuzz/fuzz-config.c tests/fuzz/config.dict tests/fuzz/corpus
CLEANFILES += tests/fuzz/fuzz-config

.PHONY: fuzz fuzz-run fuzz-clean

fuzz: tests/fuzz/fuzz-config

tests/fuzz/fuzz-config: $(FUZZ_SRCS) $(libagentbox_a_SOURCES) config.h
	@$(MKDIR_P) tests/fuzz
	$(AM_V_CC)$(FUZZ_CC) $(FUZZ_COPTS) -I$(top_srcdir) -I$(top_builddir) $(YAJL_CFLAGS) \
	  $(SECCOMP_CFLAGS) $(CAP_CFLAGS) -o $@ $(FUZZ_SRCS) $(YAJL_LIBS) $(SECCOMP_LIBS) $(CAP_LIBS)

fuzz-run: tests/fuzz/fuzz-config
	rm -rf tests/fuzz/corpus-work
	$(MKDIR_P) tests/fuzz/corpus-work
	cp $(srcdir)/tests/fuzz/corpus/* $(srcdir)/tests/unit/data/*.json tests/fuzz/corpus-work/
	tests/fuzz/fuzz-config $(FUZZ_RUN_OPTS) -max_total_time=$(FUZZ_SECONDS) \
	  -dict=$(srcdir)/tests/fuzz/config.dict -artifact_prefix=tests/fuzz/ tests/fuzz/corpus-work

fuzz-clean:
	rm -rf tests/fuzz/corpus-work tests/fuzz/fuzz-config
