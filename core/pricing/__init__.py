"""What sessions and replays cost (docs/cost.md): the price table, a session's real cost,
its own compactions' calls and a replay's requests."""
