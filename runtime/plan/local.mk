# runtime/plan/: floor 2, the plan create and exec build once from the
# validated model and the command line (docs/architecture.md).
libagentbox_a_SOURCES += runtime/plan/plan.h runtime/plan/plan.c runtime/plan/landlock.h runtime/plan/landlock.c
