# spec/: the config.json model (parse, validate, generate), state and features JSON.
libagentbox_a_SOURCES += \
	spec/model.h \
	spec/spec.h \
	spec/tables.h
libagentbox_a_SOURCES += \
	spec/tables.c \
	spec/parse-internal.h spec/parse-util.c spec/parse.c \
	spec/parse-linux.c spec/parse-resources.c \
	spec/bundle.c spec/bundle-links.h spec/bundle-links.c \
	spec/net-allow.c spec/netpolicy.h spec/egress-policy.c
include spec/defaults.mk
