"""Counting and measuring a session: tokens, pressure, the context the agent sent, rounds
and volleys, tool pairing, the indexes a replay reads, and a file that is a slice."""
