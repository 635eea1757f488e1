collect_ignore = ["fixtures", "stubs"]
