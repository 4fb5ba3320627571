"""Importers and exporters, one module per format: functions over the storage contracts
in store/base.py (`BulkStore`, `EntryReader`, `AgentLinks`), never a backend class."""
