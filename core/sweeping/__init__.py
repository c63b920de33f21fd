"""A strategy's settings swept over many sessions, in a pool or on Ray."""
