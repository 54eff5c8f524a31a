# spec/: the config.json model (parse, validate, generate), state and features JSON.
libagentbox_a_SOURCES += \
	spec/json.h spec/json.c \
	spec/gen.h spec/gen.c \
	spec/model.h \
	spec/spec.h \
	spec/tables.h \
	spec/annotations.h spec/annotations.c
include spec/defaults.mk
