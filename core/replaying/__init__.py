"""Replaying a session under a strategy: the context a strategy runs in, the replay itself,
what clearing and summarizing leave, what a summary kept, and checkpoints."""
