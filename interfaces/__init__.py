"""Transports over the engine: each parses input into an `engine.api` request, calls
`MemoryEngine.handle`, and renders the response. No engine logic lives here."""
