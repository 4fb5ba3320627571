"""Storage: the contracts every backend implements (base/), what both SQL backends
share (sql/), the backends (sqlite/, postgres/) and how a location picks one
(backends.py). Importing this package loads none of them: `sessionforest.store.base`
costs only the contracts.
"""
