dist_man_MANS += man/agentbox.8 man/agentbox-audit.8
