"""The runtime both assistant modes use: the engine (no Django), the tools, the connectors to
outside services and the factory that builds the LLM client from settings."""
