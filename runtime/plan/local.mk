# runtime/plan/: floor 2, the plan create and exec build once from the
# validated model and the command line (docs/architecture.md); who runs
# agentbox as user namespaces see it (host-ids), and the plan's rootless
# part (plan-rootless).
libagentbox_a_SOURCES += runtime/plan/plan.h runtime/plan/plan.c \
	runtime/plan/plan-internal.h runtime/plan/plan-rootless.c \
	runtime/plan/host-ids.h runtime/plan/host-ids.c \
	runtime/plan/landlock.h runtime/plan/landlock.c
