"""The agent's own compactions: where its point was (its rule's words and the session's
evidence), how far it is now, what came back after each, and the session without any."""
