"""What the tool keeps between runs: the cache folder, entries that grow in chunks, counts
and facts of a session's messages."""
