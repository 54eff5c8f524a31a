dist_man_MANS += man/agentbox.8
