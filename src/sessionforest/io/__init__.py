"""Importers and exporters, one module per format."""
