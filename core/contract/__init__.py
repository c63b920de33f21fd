"""What an agent is to the inspector: the contract every package under `core.agents`
meets, kept apart from them so that generic code depends on it and never on an agent."""
