"""The durable forest: the backend contract and its implementations."""
