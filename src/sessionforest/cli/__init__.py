"""The `forest` command line, one module per command group.

`main.py` holds the group and the error boundary; `sessions`, `entries`, `io`
and `admin` hold the commands; `common` holds what they share.
"""
