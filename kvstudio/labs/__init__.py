"""The labs as generators over the engine: they yield progress and end with a result record."""
