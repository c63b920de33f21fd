"""The agents whose sessions the inspector knows (docs/agents.md), each a package of its
own (`core.agents.<agent>`) meeting the contract of `core.contract`, and their one
registration, `core.agents.registry`, which only the front ends import."""
