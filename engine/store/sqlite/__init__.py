"""The SQLite record store (the reference backend): one table class per concern over one connection."""
