"""The agent: a small turn loop over a wire and the workspace tools, with context and compaction."""
