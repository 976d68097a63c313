"""Storage: SQLModel tables, the engine, and the queries the services share."""
